// Federated sign-in with the upstream OpenID Provider named by FEDERATED_ISSUER (deps.oauth.federation):
//
//   POST /signin/federated            (CSRF) authorization code flow with PKCE S256, state and
//                                     nonce kept in a sealed HttpOnly cookie; 302 to the upstream
//   GET  /signin/federated/callback   code exchange and id_token validation (openid-client), then
//                                     the local user by (issuer, subject), or linked by email on
//                                     first sign-in when the upstream says email_verified true
//                                     (or FEDERATED_TRUST_EMAIL); the session's amr is ["fed"].
//                                     Otherwise 403 with one generic page (no account here),
//                                     whatever the reason: it tells no one whether an address
//                                     has a local account
//
// Without a configured upstream neither exists (404).
import type Router from '@koa/router';
import { serviceRouter } from '../../../shared/http/service-app.js';
import * as client from 'openid-client';
import type { HttpState } from '../../../shared/http/http-state.js';
import { ORG_API_RATE_LIMIT, RateLimiter } from '../../../shared/http/rate-limit.js';
import { clearCookieHeader, cookieName, setCookieHeader, type CookieSpec } from '../../../shared/sign-in/browser-cookies.js';
import { signInKeys } from '../../../shared/sign-in/cookie-keys.js';
import { SIGN_IN_AMR } from '../../../shared/sign-in/sign-in-methods.js';
import { FEDERATED_FLOW_TTL_SECONDS, openFederatedFlow, sealFederatedFlow } from '../../../shared/sign-in/federated/federated-flow-cookie.js';
import type { EmailClaims } from '../../../shared/sign-in/federated/federated-account.js';
import type { CommandAppDeps } from '../../command-app-deps.js';
import type { SignInKit } from '../sign-in-kit.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { redirectTo } from '../page-response.js';
import { formOrJsonBody } from '../passkeys/form-or-json-body.js';
import { renderFederatedError } from './federated-error-page.js';
import { resolveFederatedUser } from './federated-sign-in.js';
import { UpstreamProvider } from './upstream-provider.js';

export const FEDERATED_START_PATH = SIGN_IN_PATHS.federatedSignIn;
export const FEDERATED_CALLBACK_PATH = `${SIGN_IN_PATHS.federatedSignIn}/callback`;
/** Only what finding the local account needs. */
export const FEDERATED_SCOPE = 'openid email';

/** Errors of the protocol itself (refused by the upstream, or by our checks of its answers). */
function isProtocolError(error: unknown): boolean {
  return (
    error instanceof client.ClientError ||
    error instanceof client.AuthorizationResponseError ||
    error instanceof client.ResponseBodyError ||
    error instanceof client.WWWAuthenticateChallengeError
  );
}

// Lax, not Strict: the callback is a top-level navigation from the upstream's site, and a
// Strict cookie would not be sent with it.
const FLOW_COOKIE: CookieSpec = { name: 'gp_federated', sameSite: 'Lax', maxAgeSeconds: FEDERATED_FLOW_TTL_SECONDS };

/**
 * Per source IP: each start and callback makes us call the upstream provider. Escalates on ignored
 * 429s: nobody is signed in yet, and a browser following redirects does not keep sending 120 a
 * minute while refused.
 */
const FEDERATED_RATE_LIMIT = { ...ORG_API_RATE_LIMIT, points: 120, windowSeconds: 60, abuseThreshold: 120 };

/** What may be logged of an openid-client error: never a response body or a token. */
function describe(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const { name, message } = error;
  const code = (error as { code?: unknown }).code;
  const upstreamError = (error as { error?: unknown }).error;
  return { name, message, ...(typeof code === 'string' ? { code } : {}), ...(typeof upstreamError === 'string' ? { upstreamError } : {}) };
}

export function federatedRoutes(deps: CommandAppDeps, kit: SignInKit): Router<HttpState> {
  const router = serviceRouter();
  const federation = deps.oauth.federation;
  if (!federation) return router;

  const upstream = new UpstreamProvider(federation);
  const redirectUri = `${deps.oauth.issuer}${FEDERATED_CALLBACK_PATH}`;
  const { cookieKey } = signInKeys(deps.oauth.kek);
  const https = new URL(deps.oauth.issuer).protocol === 'https:';
  const limit = new RateLimiter('federated-sign-in', FEDERATED_RATE_LIMIT, deps.rateLimitStore).middleware({ trustProxy: deps.config.trustProxy });

  router.post(FEDERATED_START_PATH, limit, formOrJsonBody(), async (ctx) => {
    kit.checkCsrf(ctx);
    let config: client.Configuration;
    try {
      config = await upstream.configuration();
    } catch (error) {
      ctx.state.log.warn(describe(error), 'federated sign-in: upstream discovery failed');
      return renderFederatedError(ctx, 'unavailable');
    }
    const codeVerifier = client.randomPKCECodeVerifier();
    const flow = { issuer: federation.issuer, state: client.randomState(), nonce: client.randomNonce(), codeVerifier };
    const location = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: FEDERATED_SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    ctx.append('Set-Cookie', setCookieHeader(FLOW_COOKIE, sealFederatedFlow(flow, cookieKey, new Date()), https));
    redirectTo(ctx, location.href);
  });

  router.get(FEDERATED_CALLBACK_PATH, limit, async (ctx) => {
    const now = new Date();
    // The flow is single use: whatever happens next, this browser must start again.
    const flow = openFederatedFlow(ctx.cookies.get(cookieName(FLOW_COOKIE, https)), cookieKey, now);
    ctx.append('Set-Cookie', clearCookieHeader(FLOW_COOKIE, https));
    if (!flow || flow.issuer !== federation.issuer) {
      ctx.state.log.info('federated sign-in: no valid flow cookie');
      return renderFederatedError(ctx, 'failed');
    }

    let config: client.Configuration;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      config = await upstream.configuration();
      // The URL the upstream redirected to, rebuilt on the issuer (not the Host header).
      const currentUrl = new URL(redirectUri);
      currentUrl.search = ctx.querystring;
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      const protocol = isProtocolError(error);
      ctx.state.log[protocol ? 'info' : 'warn'](describe(error), 'federated sign-in: code exchange refused');
      return renderFederatedError(ctx, protocol ? 'failed' : 'unavailable');
    }

    const claims = tokens.claims();
    if (!claims) return renderFederatedError(ctx, 'failed');
    const accessToken = tokens.access_token;
    const outcome = await resolveFederatedUser(
      deps,
      {
        issuer: claims.iss,
        subject: claims.sub,
        claims: claims as EmailClaims,
        userInfo: async () => {
          try {
            return (await client.fetchUserInfo(config, accessToken, claims.sub)) as EmailClaims;
          } catch (error) {
            ctx.state.log.info(describe(error), 'federated sign-in: userinfo unavailable');
            return null;
          }
        },
      },
      { correlationId: ctx.state.requestId, causationId: null, now },
      { trustUnverifiedEmail: federation.trustUnverifiedEmail ?? false },
    );
    if (outcome.outcome === 'no_account') {
      ctx.state.log.info({ reason: outcome.reason }, 'federated sign-in: no account');
      return renderFederatedError(ctx, 'noAccount');
    }
    if (outcome.linked) ctx.state.log.info({ userId: outcome.userId }, 'federated sign-in: identity linked by email');
    ctx.set('Cache-Control', 'no-store');
    await kit.complete(ctx, { userId: outcome.userId, orgId: outcome.orgId }, SIGN_IN_AMR.federated);
  });

  return router;
}
