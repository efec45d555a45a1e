// The authentication method references (RFC 8176) each way of signing in produces; they become
// the session's and the id_token's `amr`.
import type { AuthenticationMethod } from '../oauth/oauth-events.js';

export const SIGN_IN_AMR = {
  password: ['pwd'],
  /** Password plus a TOTP code: RFC 8176 `otp` (RFC 6238 codes) and `mfa` (two factors). */
  passwordAndTotp: ['pwd', 'otp', 'mfa'],
  /**
   * Password plus a recovery code. A recovery code is a look-up secret, which NIST SP 800-63B
   * §5.1.2 counts as a something-you-have factor, so `mfa` is true; it is not an RFC 4226/6238
   * one-time password, so no `otp`: a relying party can tell a recovery sign-in apart and still
   * sees two factors.
   */
  passwordAndRecoveryCode: ['pwd', 'mfa'],
  /** A passkey: hardware-bound key (`hwk`) with user verification (`user`). */
  passkey: ['hwk', 'user'],
  /** Signed in at an upstream OpenID Provider. */
  federated: ['fed'],
} as const satisfies Record<string, readonly AuthenticationMethod[]>;

/** A password-only sign-in must still pass the second factor when the user has one. */
export function isPasswordOnly(amr: readonly AuthenticationMethod[]): boolean {
  return amr.includes('pwd') && !amr.includes('mfa');
}
