// GET/POST /account/totp: turning on two-step verification with an authenticator app.
//
// GET shows a new secret as a QR code (an inline data: image, so the secret never leaves in a
// URL) and as text. Until it is confirmed, the secret waits in a sealed, short-lived cookie bound
// to the user (reloading the page keeps the same secret, so a scanned code stays valid). POST
// with a valid current code seals the secret under a new subject key of the user (destroying the
// key erases it) and appends TotpEnrolled, RecoveryCodesIssued and TotpCodeAccepted (the
// confirming code is spent, so it cannot also pass a sign-in) in one go; the ten recovery codes
// are shown this once, only their SHA-256 is kept. Both need a recent sign-in, else /signin.
import type Router from '@koa/router';
import QRCode from 'qrcode';
import { ConflictError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { seal } from '../../shared/crypto/sealed-box.js';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { SIGN_IN_COOKIES } from '../../shared/sign-in/browser-cookies.js';
import { credentialsDecider } from '../../shared/sign-in/credentials-decider.js';
import { authenticatedRecently } from '../../shared/sign-in/session-decider.js';
import { newRecoveryCodes, recoveryCodeHash } from '../../shared/sign-in/recovery-codes.js';
import { formatTotpSecret, isTotpSecret, newTotpSecret, totpUri } from '../../shared/sign-in/totp.js';
import { field, readFormFields } from './page-form.js';
import { redirectTo, sendPage } from './page-response.js';
import { SERVICE_NAME } from './pages/layout.js';
import { TOTP_CODE_REJECTED, recoveryCodesPage, totpEnrolmentPage } from './pages/totp-page.js';
import type { SignInEnv } from './sign-in-env.js';
import { userCommandContext } from './sign-in-kit.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';
import { verifyTotpCode } from './totp-check.js';

interface PendingEnrolment {
  readonly userId: number;
  readonly secret: string;
}

function isPendingEnrolment(value: unknown): value is PendingEnrolment {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Number.isSafeInteger(v.userId) && isTotpSecret(v.secret);
}

export function totpEnrolmentRoutes(router: Router<HttpState>, env: SignInEnv): void {
  const { deps, kit } = env;

  async function alreadyEnrolled(userId: number): Promise<boolean> {
    return (await deps.handler.load(oauthStreams.userCredentials(userId), credentialsDecider)).state.totp !== null;
  }

  async function render(ctx: HttpContext, session: SignInSession, secret: string, error: string | null): Promise<void> {
    const user = await deps.db(READ_MODELS.users).first('email').where({ user_id: session.userId });
    const account = (user?.email as string | undefined) ?? `user ${session.userId}`;
    const qrCodeDataUrl = await QRCode.toDataURL(totpUri(secret, { issuer: SERVICE_NAME, account }), { errorCorrectionLevel: 'M', margin: 2, width: 240 });
    sendPage(ctx, totpEnrolmentPage({ csrfToken: kit.csrfToken(ctx), qrCodeDataUrl, secretText: formatTotpSecret(secret), error }), error === null ? 200 : 400);
  }

  /** The session, if signed in recently enough to add an authenticator (session-decider.ts); else null. */
  async function recentSession(ctx: HttpContext) {
    const session = await kit.session(ctx);
    return session !== null && authenticatedRecently(session, new Date()) ? session : null;
  }

  function pendingFor(ctx: HttpContext, userId: number): PendingEnrolment | null {
    const pending = kit.cookies.getSealed(ctx, SIGN_IN_COOKIES.totpEnrolment, isPendingEnrolment);
    return pending !== null && pending.userId === userId ? pending : null;
  }

  router.get(SIGN_IN_PATHS.totp, async (ctx) => {
    const session = await recentSession(ctx);
    if (session === null) return redirectTo(ctx, SIGN_IN_PATHS.signIn);
    if (await alreadyEnrolled(session.userId)) return redirectTo(ctx, SIGN_IN_PATHS.account);
    let pending = pendingFor(ctx, session.userId);
    if (pending === null) {
      pending = { userId: session.userId, secret: newTotpSecret() };
      kit.cookies.setSealed(ctx, SIGN_IN_COOKIES.totpEnrolment, pending);
    }
    await render(ctx, session, pending.secret, null);
  });

  router.post(SIGN_IN_PATHS.totp, env.limits.forms.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    ctx.request.body = await readFormFields(ctx);
    kit.checkCsrf(ctx);
    const session = await recentSession(ctx);
    if (session === null) return redirectTo(ctx, SIGN_IN_PATHS.signIn);
    const pending = pendingFor(ctx, session.userId);
    if (pending === null) return redirectTo(ctx, SIGN_IN_PATHS.totp);
    const now = new Date();
    const code = field(ctx.request.body as Record<string, string>, 'code');
    const stream = oauthStreams.userCredentials(session.userId);
    const { state } = await deps.handler.load(stream, credentialsDecider);
    const acceptedStep = await verifyTotpCode(state, pending.secret, code, now);
    if (acceptedStep === null) return render(ctx, session, pending.secret, TOTP_CODE_REJECTED);

    const key = await deps.subjectKeys.create(`user-${session.userId}`);
    const codes = newRecoveryCodes();
    try {
      await deps.handler.handle(
        stream,
        credentialsDecider,
        {
          type: 'EnrolTotp',
          data: {
            userId: session.userId,
            secret: seal(key, pending.secret),
            recoveryCodeHashes: codes.map((c) => recoveryCodeHash(c)!),
            acceptedStep,
          },
        },
        userCommandContext(ctx, session.userId, now),
      );
    } catch (error) {
      // Enrolled meanwhile (another tab): nothing to show but the account page.
      if (!(error instanceof ConflictError)) throw error;
      kit.cookies.clear(ctx, SIGN_IN_COOKIES.totpEnrolment);
      return redirectTo(ctx, SIGN_IN_PATHS.account);
    }
    kit.cookies.clear(ctx, SIGN_IN_COOKIES.totpEnrolment);
    sendPage(ctx, recoveryCodesPage({ codes }));
  });
}
