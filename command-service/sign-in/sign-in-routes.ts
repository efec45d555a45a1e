// The browser-facing side of the authorization server: authorize, sign-in, second factor,
// consent, account (TOTP enrolment), logout and the home page; and the passkey and federated
// sign-in methods, mounted beside them with the kit they share.
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import type { HttpState } from '../../shared/http/http-state.js';
import type { CommandAppDeps } from '../command-app-deps.js';
import { accountRoutes } from './account.js';
import { authorizeRoute } from './authorize.js';
import { consentRoutes } from './consent.js';
import { federatedRoutes } from './federated/federated-routes.js';
import { homeRoutes } from './home.js';
import { logoutRoutes } from './logout.js';
import { passkeyRoutes } from './passkeys/passkey-routes.js';
import { passwordSignInRoutes } from './password-sign-in.js';
import { secondFactorRoutes } from './second-factor.js';
import type { SignInEnv } from './sign-in-env.js';
import { createSignInKit } from './sign-in-kit.js';
import { signInLimits } from './sign-in-limits.js';
import { totpEnrolmentRoutes } from './totp-enrolment.js';

export function signInRoutes(deps: CommandAppDeps, options: { trustProxy: boolean }): Router<HttpState> {
  const env: SignInEnv = {
    deps,
    kit: createSignInKit(deps),
    limits: signInLimits(deps.rateLimitStore),
    trustProxy: options.trustProxy,
  };
  const router = serviceRouter();
  authorizeRoute(router, env);
  passwordSignInRoutes(router, env);
  secondFactorRoutes(router, env);
  consentRoutes(router, env);
  accountRoutes(router, env);
  totpEnrolmentRoutes(router, env);
  logoutRoutes(router, env);
  homeRoutes(router, env);
  const passkeys = passkeyRoutes(deps, env.kit);
  const federated = federatedRoutes(deps, env.kit);
  router.use(passkeys.routes());
  router.use(federated.routes());
  return router;
}
