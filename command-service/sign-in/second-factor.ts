// GET/POST /signin/second-factor: after the password, a TOTP code or a recovery code.
//
// The half-signed-in state (user, password accepted) is a sealed cookie of five minutes; without
// it the browser starts again at /signin. A six-digit code is a TOTP code, its time step spent
// with one append on the user's credentials stream (TotpCodeAccepted: each code works once, on
// every replica); anything shaped like a recovery code is spent the same way (recovery codes
// work once). Wrong codes are throttled per user, the attempt taken before the check (a burst of
// codes cannot outrun the count). amr: see sign-in-methods.ts.
import type Router from '@koa/router';
import { RateLimitedError, ValidationError } from '../../shared/errors.js';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { oauthStreams, type AuthenticationMethod } from '../../shared/oauth/oauth-events.js';
import { credentialsDecider } from '../../shared/sign-in/credentials-decider.js';
import { recoveryCodeHash } from '../../shared/sign-in/recovery-codes.js';
import { SIGN_IN_AMR } from '../../shared/sign-in/sign-in-methods.js';
import { normaliseTotpCode } from '../../shared/sign-in/totp.js';
import { field, readFormFields } from './page-form.js';
import { redirectTo, sendPage } from './page-response.js';
import { SECOND_FACTOR_FAILED, secondFactorPage } from './pages/second-factor-page.js';
import { TOO_MANY_ATTEMPTS } from './pages/layout.js';
import { takeAttempts, type Attempts } from '../../shared/sign-in/failure-throttle.js';
import type { SignInEnv } from './sign-in-env.js';
import { userCommandContext, type PendingSecondFactor } from './sign-in-kit.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';
import { acceptTotpCode, openTotpSecret } from './totp-check.js';

export function secondFactorRoutes(router: Router<HttpState>, env: SignInEnv): void {
  const { kit, limits } = env;

  const render = (ctx: HttpContext, error: string | null, status = 200) =>
    sendPage(ctx, secondFactorPage({ csrfToken: kit.csrfToken(ctx), error }), status);

  router.get(SIGN_IN_PATHS.secondFactor, async (ctx) => {
    if (kit.pendingSecondFactor(ctx) === null) return redirectTo(ctx, SIGN_IN_PATHS.signIn);
    render(ctx, null);
  });

  router.post(SIGN_IN_PATHS.secondFactor, limits.forms.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    ctx.request.body = await readFormFields(ctx);
    kit.checkCsrf(ctx);
    const pending = kit.pendingSecondFactor(ctx);
    if (pending === null) return redirectTo(ctx, SIGN_IN_PATHS.signIn);
    const userKey = String(pending.userId);
    let attempts: Attempts;
    try {
      attempts = await takeAttempts([[limits.secondFactorFailuresByUser, userKey]]);
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      ctx.set('Retry-After', String(Math.max(1, error.retryAfterSeconds)));
      return render(ctx, TOO_MANY_ATTEMPTS, 429);
    }

    const amr = await verifySecondFactor(env, ctx, pending, field(ctx.request.body as Record<string, string>, 'code'));
    if (amr === null) return render(ctx, SECOND_FACTOR_FAILED, 400);
    await attempts.succeeded();
    await kit.startSession(ctx, pending, amr);
  });
}

/** The amr the code proves with the password, or null when it is not a valid code for the user. */
async function verifySecondFactor(
  env: SignInEnv,
  ctx: HttpContext,
  pending: PendingSecondFactor,
  code: string,
): Promise<readonly AuthenticationMethod[] | null> {
  const { deps } = env;
  const now = new Date();
  const stream = oauthStreams.userCredentials(pending.userId);
  if (normaliseTotpCode(code) !== null) {
    const { state } = await deps.handler.load(stream, credentialsDecider);
    const secret = state.totp === null ? null : await openTotpSecret(deps.subjectKeys, state.totp);
    if (secret === null) return null;
    const accepted = await acceptTotpCode(deps, { userId: pending.userId, state, secret, code }, userCommandContext(ctx, pending.userId, now));
    return accepted ? SIGN_IN_AMR.passwordAndTotp : null;
  }
  const codeHash = recoveryCodeHash(code);
  if (codeHash === null) return null;
  try {
    await deps.handler.handle(
      stream,
      credentialsDecider,
      { type: 'UseRecoveryCode', data: { userId: pending.userId, codeHash } },
      userCommandContext(ctx, pending.userId, now),
    );
  } catch (error) {
    if (error instanceof ValidationError) return null;
    throw error;
  }
  return SIGN_IN_AMR.passwordAndRecoveryCode;
}
