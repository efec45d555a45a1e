// What every route of the sign-in flow is given.
import type { CommandAppDeps } from '../app.js';
import type { TotpReplayGuard } from '../../shared/sign-in/totp-replay-guard.js';
import type { BrowserSignIn } from './sign-in-kit.js';
import type { SignInLimits } from './sign-in-limits.js';

export interface SignInEnv {
  readonly deps: CommandAppDeps;
  readonly kit: BrowserSignIn;
  readonly limits: SignInLimits;
  readonly totpGuard: TotpReplayGuard;
  readonly trustProxy: boolean;
}
