// GET /account (who is signed in, the authenticator app, passkeys), POST /account/sign-out
// (ends this browser's session; the logout endpoint needs an id_token_hint, a person at the
// account page does not) and POST /account/reauthenticate (to the sign-in page, for the account
// page: adding an authenticator or removing a passkey needs a recent sign-in).
import type Router from '@koa/router';
import { READ_MODELS } from '../../shared/db/read-models.js';
import type { HttpState } from '../../shared/http/http-state.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { credentialsDecider } from '../../shared/sign-in/credentials-decider.js';
import { authenticatedRecently } from '../../shared/sign-in/session-decider.js';
import { otherWayToSignIn } from './passkeys/remove-passkey.js';
import { readFormFields } from './page-form.js';
import { redirectTo, sendPage } from './page-response.js';
import { accountPage } from './pages/account-page.js';
import type { SignInEnv } from './sign-in-env.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';

export function accountRoutes(router: Router<HttpState>, env: SignInEnv): void {
  const { deps, kit } = env;

  router.get(SIGN_IN_PATHS.account, async (ctx) => {
    const session = await kit.session(ctx);
    if (session === null) return redirectTo(ctx, SIGN_IN_PATHS.signIn);
    const [user, credentials] = await Promise.all([
      deps.db(READ_MODELS.users).first('email', 'password_hash').where({ user_id: session.userId }),
      deps.handler.load(oauthStreams.userCredentials(session.userId), credentialsDecider),
    ]);
    const other = otherWayToSignIn(credentials.state, typeof user?.password_hash === 'string', deps.oauth.federation?.issuer ?? null);
    sendPage(
      ctx,
      accountPage({
        csrfToken: kit.csrfToken(ctx),
        email: (user?.email as string | undefined) ?? null,
        totpEnrolled: credentials.state.totp !== null,
        passkeyIds: [...credentials.state.passkeys],
        mayChangeAuthenticators: authenticatedRecently(session, new Date()),
        passkeysRemovable: other || credentials.state.passkeys.size > 1,
      }),
    );
  });

  router.post(SIGN_IN_PATHS.reauthenticate, env.limits.forms.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    ctx.request.body = await readFormFields(ctx);
    kit.checkCsrf(ctx);
    // This sign-in is for the account page: an authorization left pending in this browser must
    // not be the one it completes.
    kit.dropFlow(ctx);
    redirectTo(ctx, SIGN_IN_PATHS.signIn);
  });

  router.post(SIGN_IN_PATHS.signOut, env.limits.forms.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    ctx.request.body = await readFormFields(ctx);
    kit.checkCsrf(ctx);
    await kit.endSession(ctx, 'logout');
    kit.dropFlow(ctx);
    redirectTo(ctx, SIGN_IN_PATHS.home);
  });
}
