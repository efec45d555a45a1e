// GET/POST /consent: the consent page of the authorization in progress.
//
// The page is always about the flow cookie's request, re-validated here as the authorize endpoint
// validates it (a cookie is not trusted to still describe a valid client). The form posts back the
// id of the request it showed: an Allow counts only for that request, never for a newer one
// another tab started meanwhile. Allow records OAuthConsentGranted (remembered for the next time),
// marks the flow as consented by this session and goes back to the authorize endpoint, which
// issues the code; Deny sends access_denied to the client (RFC 6749 §4.1.2.1).
import type Router from '@koa/router';
import { ValidationError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { authorizeErrorLocation, validateAuthorizeRequest, type AuthorizeRequest } from '../../shared/oauth/authorize-request.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import { AccessDenied } from '../../shared/oauth/oauth-errors.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { authorizeLocationOf, consentedFor, flowRequestId, type AuthorizationFlow } from '../../shared/sign-in/authorization-flow.js';
import { consentDecider } from '../../shared/sign-in/consent-decider.js';
import { digestsEqual } from '../../shared/oauth/opaque-credentials.js';
import { field, readFormFields } from './page-form.js';
import { parseFormFields } from '../../shared/http/form-body.js';
import { redirectTo, sendPage } from './page-response.js';
import { consentPage } from './pages/consent-page.js';
import { messagePage } from './pages/message-page.js';
import type { SignInEnv } from './sign-in-env.js';
import { userCommandContext } from './sign-in-kit.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';

type Consentable =
  | { readonly ok: true; readonly flow: AuthorizationFlow; readonly session: SignInSession; readonly request: AuthorizeRequest }
  /** Nothing to consent to here: the response is already set. */
  | { readonly ok: false };

export function consentRoutes(router: Router<HttpState>, env: SignInEnv): void {
  const { deps, kit } = env;
  const issuer = deps.oauth.issuer;

  /**
   * The flow, session and request the page is about. Whatever is missing or no longer valid, the
   * authorize endpoint knows what to do with the request (sign in, an error to the client, ...).
   */
  async function consentable(ctx: HttpContext): Promise<Consentable> {
    const flow = kit.flow(ctx);
    if (flow === null) {
      sendPage(
        ctx,
        messagePage({
          title: 'No request in progress',
          message: 'There is no sign-in request waiting for your consent. Return to the app and try again.',
          link: { href: SIGN_IN_PATHS.home, text: 'Go to the home page' },
        }),
        400,
      );
      return { ok: false };
    }
    const session = await kit.session(ctx);
    const validation = await validateAuthorizeRequest(parseFormFields(flow.query), deps.oauth.clients, issuer);
    if (session === null || validation.outcome !== 'valid' || validation.request.client.orgId !== session.orgId) {
      redirectTo(ctx, authorizeLocationOf(flow));
      return { ok: false };
    }
    return { ok: true, flow, session, request: validation.request };
  }

  router.get(SIGN_IN_PATHS.consent, async (ctx) => {
    const found = await consentable(ctx);
    if (!found.ok) return;
    const { flow, session, request } = found;
    const user = await deps.db(READ_MODELS.users).first('email').where({ user_id: session.userId });
    sendPage(
      ctx,
      consentPage({
        csrfToken: kit.csrfToken(ctx),
        clientName: request.client.name,
        scopes: request.scopes,
        userEmail: (user?.email as string | undefined) ?? null,
        requestId: flowRequestId(flow),
      }),
    );
  });

  router.post(SIGN_IN_PATHS.consent, env.limits.forms.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    ctx.request.body = await readFormFields(ctx);
    kit.checkCsrf(ctx);
    const form = ctx.request.body as Record<string, string>;
    const decision = field(form, 'decision');
    if (decision !== 'allow' && decision !== 'deny') throw new ValidationError('the consent form needs a decision: allow or deny');
    const found = await consentable(ctx);
    if (!found.ok) return;
    const { flow, session, request } = found;
    // The page on screen was about another request: show the current one instead.
    if (!digestsEqual(field(form, 'request'), flowRequestId(flow))) return redirectTo(ctx, authorizeLocationOf(flow));

    if (decision === 'deny') {
      kit.dropFlow(ctx);
      return redirectTo(ctx, authorizeErrorLocation(request.redirectUri, new AccessDenied('The user denied the request.'), request.state, issuer));
    }
    await deps.handler.handle(
      oauthStreams.consents(session.userId),
      consentDecider,
      { type: 'GrantConsent', data: { userId: session.userId, clientId: request.client.clientId, scopes: [...request.scopes] } },
      userCommandContext(ctx, session.userId, new Date()),
    );
    kit.keepFlow(ctx, consentedFor(flow, session.sid));
    redirectTo(ctx, authorizeLocationOf(flow));
  });
}
