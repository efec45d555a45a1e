// What every route of the sign-in flow is given.
import type { CommandAppDeps } from '../command-app-deps.js';
import type { BrowserSignIn } from './sign-in-kit.js';
import type { SignInLimits } from './sign-in-limits.js';

export interface SignInEnv {
  readonly deps: CommandAppDeps;
  readonly kit: BrowserSignIn;
  readonly limits: SignInLimits;
  readonly trustProxy: boolean;
}
