// TOTP (RFC 6238) as every authenticator app speaks it: HMAC-SHA-1, 6 digits, 30-second steps,
// a 160-bit secret shown as Base32 and in an otpauth:// URI (the QR code). otplib does the
// arithmetic; this module fixes the parameters and the acceptance window.
//
// Window: the current step and one on either side (RFC 6238 §5.2 allows for transmission delay and
// clock drift; one step each way is the usual compromise). Replay: a code is never accepted for a
// step at or before the last step accepted for the user (`afterStep`: the credentials stream's
// last TotpCodeAccepted, see credentials-decider.ts).
import { generateSecret, generateURI, verify } from 'otplib';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
const SECRET_BYTES = 20;
const TOLERANCE_SECONDS = TOTP_PERIOD_SECONDS;
const CODE = /^\d{6}$/;
const BASE32_SECRET = /^[A-Z2-7]{32}$/;

/** A new shared secret, Base32 (what the app is given). */
export function newTotpSecret(): string {
  return generateSecret({ length: SECRET_BYTES });
}

export function isTotpSecret(value: unknown): value is string {
  return typeof value === 'string' && BASE32_SECRET.test(value);
}

/** A six-digit code, spaces allowed between digits (apps show "123 456"). */
export function normaliseTotpCode(input: string): string | null {
  const code = input.replace(/\s+/g, '');
  return CODE.test(code) ? code : null;
}

/** The otpauth:// URI of the enrolment QR code (Key Uri Format, as Google Authenticator reads it). */
export function totpUri(secret: string, options: { readonly issuer: string; readonly account: string }): string {
  return generateURI({ issuer: options.issuer, label: options.account, secret, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS });
}

/** The secret grouped by four for reading aloud or typing. */
export function formatTotpSecret(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

/**
 * The time step the code belongs to, or null when it is not a valid code now (or only for a step
 * at or before `afterStep`).
 */
export async function verifyTotp(
  secret: string,
  code: string,
  options: { readonly now: Date; readonly afterStep?: number | undefined },
): Promise<number | null> {
  const token = normaliseTotpCode(code);
  if (token === null || !isTotpSecret(secret)) return null;
  try {
    const result = await verify({
      secret,
      token,
      epoch: Math.floor(options.now.getTime() / 1000),
      epochTolerance: TOLERANCE_SECONDS,
      ...(options.afterStep !== undefined ? { afterTimeStep: options.afterStep } : {}),
    });
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  } catch {
    return null;
  }
}
