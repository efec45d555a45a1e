// What every console route is given: the command side's ports (the same use cases the API and
// the CLI call), the sign-in kit (session, CSRF, where to come back after signing in) and the
// forms' rate limit.
import type { CommandAppDeps } from '../command-service/command-app-deps.js';
import type { BrowserSignIn } from '../command-service/sign-in/sign-in-kit.js';
import type { RateLimiter } from '../shared/http/rate-limit.js';

export interface ConsoleEnv {
  readonly deps: CommandAppDeps;
  readonly kit: BrowserSignIn;
  /** Every console POST, per source address (the sign-in forms' policy). */
  readonly forms: RateLimiter;
  readonly trustProxy: boolean;
}
