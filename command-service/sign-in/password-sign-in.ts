// GET/POST /signin: email and password. Every failure (unknown email, wrong password, an account
// without a password, empty fields) answers the same page with the same message; failures are
// throttled per account (or per account and device, see device-cookie.ts) and per source address. On success the kit takes over: the second
// factor when the user has one, then the session and the authorization in progress.
import type Router from '@koa/router';
import { RateLimitedError } from '../../shared/errors.js';
import { clientIp, rateLimitSource } from '../../shared/http/client-ip.js';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { SIGN_IN_AMR } from '../../shared/sign-in/sign-in-methods.js';
import { authenticatedRecently } from '../../shared/sign-in/session-decider.js';
import { MAX_LOGIN_HINT_LENGTH } from '../../shared/oauth/authorize-request.js';
import { field, readFormFields } from './page-form.js';
import { parseFormFields } from '../../shared/http/form-body.js';
import { redirectTo, sendPage } from './page-response.js';
import { checkPassword, dummyPasswordHash, normaliseSignInEmail } from './password-check.js';
import { SIGN_IN_FAILED, signInPage } from './pages/sign-in-page.js';
import { TOO_MANY_ATTEMPTS } from './pages/layout.js';
import { knownDevice, rememberDevice } from './device-cookie.js';
import { takeAttempts, type AttemptKey, type Attempts } from '../../shared/sign-in/failure-throttle.js';
import type { SignInEnv } from './sign-in-env.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';

const VISIBLE_ASCII = /^[\x20-\x7e]+$/;

export function passwordSignInRoutes(router: Router<HttpState>, env: SignInEnv): void {
  const { deps, kit, limits } = env;
  void dummyPasswordHash();

  const render = (ctx: HttpContext, input: { email: string; error: string | null }, status = 200) =>
    sendPage(ctx, signInPage({ csrfToken: kit.csrfToken(ctx), federationName: deps.oauth.federation?.displayName ?? null, ...input }), status);

  router.get(SIGN_IN_PATHS.signIn, async (ctx) => {
    const flow = kit.flow(ctx);
    // Nothing to sign in for: a visitor who signed in recently goes to the account page. One who
    // signed in longer ago may sign in again, as adding an authenticator needs (session-decider.ts).
    const session = flow === null ? await kit.session(ctx) : null;
    if (session !== null && authenticatedRecently(session, new Date())) return redirectTo(ctx, kit.landingPage(ctx));
    // The client's login_hint pre-fills the email (only a hint: the user can change it).
    const hint = flow === null ? undefined : parseFormFields(flow.query).login_hint;
    const email = typeof hint === 'string' && hint.length <= MAX_LOGIN_HINT_LENGTH && VISIBLE_ASCII.test(hint) ? hint : '';
    render(ctx, { email, error: null });
  });

  router.post(SIGN_IN_PATHS.signIn, env.limits.forms.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    ctx.request.body = await readFormFields(ctx);
    kit.checkCsrf(ctx);
    const form = ctx.request.body as Record<string, string | string[] | undefined>;
    const typed = field(form, 'email');
    const password = field(form, 'password');
    const email = normaliseSignInEmail(typed);
    const ip = rateLimitSource(clientIp(ctx, env.trustProxy));
    // In-memory keys never hold the address itself; what cannot be an address has no bucket.
    const emailKey = email === null ? null : sha256Hex(email);
    // A browser that entered this account's password before guesses on its own budget, so
    // failures elsewhere cannot lock the owner out (device-cookie.ts).
    const device = emailKey === null ? null : knownDevice(kit.cookies, ctx, emailKey);
    const accountKey: AttemptKey[] =
      emailKey === null ? [] : device === null ? [[limits.passwordFailuresByEmail, emailKey]] : [[limits.passwordFailuresByDevice, `${emailKey}:${device}`]];

    let attempts: Attempts;
    try {
      attempts = await takeAttempts([[limits.passwordFailuresByIp, ip], ...accountKey]);
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      ctx.set('Retry-After', String(Math.max(1, error.retryAfterSeconds)));
      return render(ctx, { email: typed, error: TOO_MANY_ATTEMPTS }, 429);
    }

    const account =
      email === null || password === '' ? null : await checkPassword(deps.db, email, password, { preferredOrgId: await flowOrgId(env, ctx) });
    if (account === null) return render(ctx, { email: typed, error: SIGN_IN_FAILED }, 400);
    await attempts.succeeded();
    rememberDevice(kit.cookies, ctx, emailKey!, device);
    await kit.complete(ctx, account, SIGN_IN_AMR.password);
  });
}

/** The organization of the client waiting for this sign-in, if any. */
async function flowOrgId(env: SignInEnv, ctx: HttpContext): Promise<number | null> {
  const flow = env.kit.flow(ctx);
  const clientId = flow === null ? undefined : parseFormFields(flow.query).client_id;
  if (typeof clientId !== 'string') return null;
  const client = await env.deps.oauth.clients.findClient(clientId).catch(() => null);
  return client?.orgId ?? null;
}
