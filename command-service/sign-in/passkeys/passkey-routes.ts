// Passkeys (WebAuthn): registration from the account page and sign-in from the sign-in page.
//
//   GET  /signin/passkey.js           the browser script (static)
//   POST /signin/passkey/options      request options for a discoverable credential (CSRF)
//   POST /signin/passkey/verify       the assertion: starts the session, amr hwk+user (CSRF)
//   POST /account/passkeys/options    creation options for the signed-in user (CSRF)
//   POST /account/passkeys/verify     the attestation: records PasskeyRegistered (CSRF)
//   POST /account/passkeys/remove     form `credential_id`: records PasskeyRemoved, back to /account (CSRF)
//
// The account routes need a recent sign-in (session-decider.ts).
// The relying party is the issuer: RP ID its host name, the only accepted origin its origin.
// Challenges live in PostgreSQL (passkey-challenges.ts says why), found through an HttpOnly
// SameSite=Strict cookie that holds a random handle, and are spent by the verify that reads them
// (browser-ceremonies.ts).
import type Router from '@koa/router';
import { serviceRouter } from '../../../shared/http/service-app.js';
import { generateAuthenticationOptions } from '@simplewebauthn/server';
import type { HttpContext, HttpState } from '../../../shared/http/http-state.js';
import { AccessDenied, InvalidRequest, OAuthError } from '../../../shared/oauth/oauth-errors.js';
import { DomainError } from '../../../shared/errors.js';
import { isCredentialId } from '../../../shared/sign-in/passkeys/passkey-decider.js';
import { removePasskey } from './remove-passkey.js';
import { ORG_API_RATE_LIMIT, RateLimiter } from '../../../shared/http/rate-limit.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { SIGN_IN_AMR } from '../../../shared/sign-in/sign-in-methods.js';
import { authenticatedRecently } from '../../../shared/sign-in/session-decider.js';
import { relyingPartyOf } from '../../../shared/sign-in/passkeys/relying-party.js';
import { parseAuthenticationResponse, parseRegistrationResponse } from '../../../shared/sign-in/passkeys/webauthn-responses.js';
import type { CommandAppDeps } from '../../command-app-deps.js';
import { userCommandContext, type SignInKit } from '../sign-in-kit.js';
import { CEREMONY_TTL_SECONDS } from './passkey-challenges.js';
import { browserCeremonies } from './browser-ceremonies.js';
import { formOrJsonBody } from './form-or-json-body.js';
import { PASSKEY_SCRIPT_PATH, servePasskeyScript } from './passkey-script.js';
import { passkeyRegistrationOptions, registerPasskey } from './register-passkey.js';
import { PasskeySignInRefused, signInWithPasskey } from './sign-in-with-passkey.js';
import { redirectTo, sendPage } from '../page-response.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { signInPage } from '../pages/sign-in-page.js';

/**
 * Per source IP, like the sign-in forms (a whole office may share an address): bounds the pending
 * ceremonies one source can store, and the signature checks it can ask for. Escalates on ignored
 * 429s: the ceremony runs before anyone is signed in, and a person at a browser does not send a
 * further 300 requests in the minutes after being refused.
 */
const PASSKEY_RATE_LIMIT = { ...ORG_API_RATE_LIMIT, points: 300, windowSeconds: 60, abuseThreshold: 300 };

/** The sign-in page's message for every refused passkey: it must not tell which check failed. */
export const PASSKEY_SIGN_IN_REFUSED_PAGE = 'Passkey sign-in did not work. Try again, or sign in with your password.';

export function passkeyRoutes(deps: CommandAppDeps, kit: SignInKit): Router<HttpState> {
  const relyingParty = relyingPartyOf(deps.oauth.issuer);
  const ceremonies = browserCeremonies(deps.db, deps.oauth.issuer);
  const router = serviceRouter();
  const limit = new RateLimiter('passkeys', PASSKEY_RATE_LIMIT, deps.rateLimitStore).middleware({ trustProxy: deps.config.trustProxy });
  const body = formOrJsonBody();

  function context(ctx: HttpContext, now: Date): Omit<CommandContext, 'actor'> {
    return { correlationId: ctx.state.requestId, causationId: null, now };
  }

  function sendJson(ctx: HttpContext, status: number, value: unknown): void {
    // Challenges and credential data: never stored by a cache.
    ctx.set('Cache-Control', 'no-store');
    ctx.status = status;
    ctx.body = value;
  }

  /** The user changing their passkeys: signed in, and recently enough to change authenticators (session-decider.ts). */
  async function signedInUser(ctx: HttpContext, change: 'add' | 'remove'): Promise<number> {
    const session = await kit.session(ctx);
    if (!session) throw new AccessDenied('Sign in first.');
    if (!authenticatedRecently(session, new Date())) throw new AccessDenied(`Sign in again to ${change} a passkey.`);
    return session.userId;
  }

  router.get(PASSKEY_SCRIPT_PATH, servePasskeyScript);

  router.post('/signin/passkey/options', limit, body, async (ctx) => {
    kit.checkCsrf(ctx);
    const now = new Date();
    // No allowCredentials: the authenticator offers the discoverable credentials it holds for
    // this RP, so the browser need not say who is signing in before proving it.
    const options = await generateAuthenticationOptions({
      rpID: relyingParty.id,
      userVerification: 'required',
      timeout: CEREMONY_TTL_SECONDS * 1000,
    });
    await ceremonies.begin(ctx, { purpose: 'authentication', challenge: options.challenge, userId: null }, now);
    sendJson(ctx, 200, options);
  });

  router.post('/signin/passkey/verify', limit, body, async (ctx) => {
    kit.checkCsrf(ctx);
    const now = new Date();
    const response = parseAuthenticationResponse(ctx.request.body);
    const ceremony = await ceremonies.take(ctx, 'authentication', now);
    let user;
    try {
      user = await signInWithPasskey(deps, { response, ceremony, relyingParty }, context(ctx, now));
    } catch (error) {
      if (!(error instanceof PasskeySignInRefused)) throw error;
      ctx.state.log.info({ reason: error.reason }, 'passkey sign-in refused');
      // The script posts the assertion as a form: a person sees the sign-in page again, not JSON.
      if (ctx.accepts('json', 'html') !== 'html') throw error;
      const page = signInPage({ csrfToken: kit.csrfToken(ctx), email: '', error: PASSKEY_SIGN_IN_REFUSED_PAGE, federationName: deps.oauth.federation?.displayName ?? null });
      return sendPage(ctx, page, 400);
    }
    ctx.set('Cache-Control', 'no-store');
    await kit.complete(ctx, user, SIGN_IN_AMR.passkey);
  });

  router.post('/account/passkeys/options', limit, body, async (ctx) => {
    const userId = await signedInUser(ctx, 'add');
    kit.checkCsrf(ctx);
    const now = new Date();
    const options = await passkeyRegistrationOptions(deps, { userId, relyingParty });
    await ceremonies.begin(ctx, { purpose: 'registration', challenge: options.challenge, userId }, now);
    sendJson(ctx, 200, options);
  });

  router.post('/account/passkeys/verify', limit, body, async (ctx) => {
    const userId = await signedInUser(ctx, 'add');
    kit.checkCsrf(ctx);
    const now = new Date();
    const response = parseRegistrationResponse(ctx.request.body);
    const ceremony = await ceremonies.take(ctx, 'registration', now);
    const { credentialId } = await registerPasskey(
      deps,
      { userId, response, ceremony, relyingParty },
      userCommandContext(ctx, userId, now),
    );
    sendJson(ctx, 201, { success: true, credential_id: credentialId });
  });

  router.post(SIGN_IN_PATHS.passkeyRemove, limit, body, async (ctx) => {
    // The account page's form: a person is sent back to that page whatever happened (it shows what
    // they may do, "sign in again" for a stale session); a script gets the error as JSON.
    const page = ctx.accepts('json', 'html') === 'html';
    try {
      const userId = await signedInUser(ctx, 'remove');
      kit.checkCsrf(ctx);
      const credentialId = (ctx.request.body as Record<string, unknown> | undefined)?.credential_id;
      if (typeof credentialId !== 'string' || !isCredentialId(credentialId)) throw new InvalidRequest('The credential_id is missing or malformed.');
      await removePasskey(deps, { userId, credentialId }, userCommandContext(ctx, userId, new Date()));
    } catch (error) {
      if (!page || !(error instanceof DomainError || error instanceof OAuthError)) throw error;
      ctx.state.log.info({ reason: error.message }, 'passkey removal refused');
    }
    redirectTo(ctx, SIGN_IN_PATHS.account);
  });

  return router;
}
