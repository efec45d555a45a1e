// What every console route is given: the command side's ports (the same use cases the API and
// the CLI call), the sign-in kit (session, CSRF, where to come back after signing in), the
// forms' rate limit and the page cursors' signer.
import type { CommandAppDeps } from '../command-service/command-app-deps.js';
import type { BrowserSignIn } from '../command-service/sign-in/sign-in-kit.js';
import type { RateLimiter } from '../shared/http/rate-limit.js';
import type { PageCursor } from '../shared/http/page-cursor.js';

export interface ConsoleEnv {
  readonly deps: CommandAppDeps;
  readonly kit: BrowserSignIn;
  /** Every console POST, per source address (the sign-in forms' policy). */
  readonly forms: RateLimiter;
  readonly trustProxy: boolean;
  /** Signs and checks the lists' page cursors with PAGE_CURSOR_SECRET: a cursor works on every instance. */
  readonly cursor: PageCursor;
}
