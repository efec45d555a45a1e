// GET and POST /api/oauth/logout (spec "GET and POST /api/oauth/logout"; OpenID Connect
// RP-Initiated Logout 1.0). Always 302 (or 429): logout-request.ts decides whether the session
// ends and where the browser goes; this reads the parameters, verifies the hint (signature and
// issuer; an expired one is fine), looks the client up, and carries the decision out.
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import { verifyIdTokenHint } from '../../shared/oauth/tokens.js';
import {
  decideLogout,
  logoutClientId,
  readLogoutParameters,
  type HintOutcome,
  type LogoutParameters,
} from '../../shared/sign-in/logout-request.js';
import { readFormFields, type FormFields } from './page-form.js';
import { redirectTo } from './page-response.js';
import type { SignInEnv } from './sign-in-env.js';

export function logoutRoutes(router: Router<HttpState>, env: SignInEnv): void {
  const { deps, kit } = env;
  const limit = env.limits.logout.middleware({ trustProxy: env.trustProxy });

  /** `fields` null: a body that could not be read. */
  async function logout(ctx: HttpContext, fields: FormFields | null): Promise<void> {
    // An unreadable body is a request with a malformed parameter: home, nothing ended.
    const params = fields === null ? { ...readLogoutParameters({}), malformed: true } : readLogoutParameters(fields);
    const hint = await verifyHint(params);
    const clientId = params.malformed ? null : logoutClientId(params, hint);
    const client = clientId === null ? null : await deps.oauth.clients.findClient(clientId);
    const decision = decideLogout({ params, hint, session: await kit.session(ctx), client });
    if (decision.endSession) {
      await kit.endSession(ctx, 'logout');
      kit.dropFlow(ctx);
    }
    redirectTo(ctx, decision.location);
  }

  async function verifyHint(params: LogoutParameters): Promise<HintOutcome> {
    if (params.idTokenHint === null) return { kind: 'absent' };
    try {
      return { kind: 'valid', hint: await verifyIdTokenHint(params.idTokenHint, deps.oauth.verificationKeys, { issuer: deps.oauth.issuer }) };
    } catch {
      return { kind: 'invalid' };
    }
  }

  router.get(OAUTH_PATHS.logout, limit, (ctx) => logout(ctx, ctx.query as FormFields));

  router.post(OAUTH_PATHS.logout, limit, async (ctx) => {
    // The answer is a redirect whatever was sent.
    const fields = await readFormFields(ctx).catch(() => null);
    await logout(ctx, fields);
  });
}
