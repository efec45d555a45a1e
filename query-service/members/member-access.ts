// Authentication of the member endpoints, which take two kinds of credential at one path (the
// gateway routes every GET of /api/v1/* here, whatever the credential): an organization API key
// (`svc_sk_...` as Bearer, or X-API-Key) needing org:members:read, or a user's OAuth access token
// (a JWT as Bearer) with scope members:read whose user still holds the organization's
// employee_view role (else 403 insufficient_scope). The kind is told by the credential's form,
// never by trying one and then the other; a request with no credential is the API key's 401.
import { API_KEY_PREFIX } from '../../shared/auth/api-key-auth.js';
import { requireScope } from '../../shared/auth/scope-guard.js';
import type { HttpContext, HttpMiddleware } from '../../shared/http/http-state.js';
import { MEMBERS_READ_SCOPE } from './member-fields.js';

export const MEMBERS_USER_SCOPE = 'members:read';
export const EMPLOYEE_VIEW_ROLE = 'employee_view';

/** True when the request carries an API key (or no credential at all), false for any other bearer token. */
export function presentsApiKey(ctx: Pick<HttpContext, 'get'>): boolean {
  if (ctx.get('x-api-key') !== '') return true;
  const bearer = /^Bearer +(\S+)/i.exec(ctx.get('authorization'))?.[1];
  return bearer === undefined || bearer.startsWith(API_KEY_PREFIX);
}

export interface MemberAccessDeps {
  /** apiKeyAuth of the app. */
  readonly apiKey: HttpMiddleware;
  /** The access-token middleware for members:read with the employee_view role. */
  readonly userToken: HttpMiddleware;
}

/** Sets ctx.state.principal from either credential, with the basic member scope (API key) or role and scope (user) checked. */
export function memberDirectoryAccess(deps: MemberAccessDeps): HttpMiddleware {
  const basicScope = requireScope(MEMBERS_READ_SCOPE);
  return async function authenticateMemberReader(ctx, next) {
    if (presentsApiKey(ctx)) await deps.apiKey(ctx, () => basicScope(ctx, next));
    else await deps.userToken(ctx, next);
  };
}
