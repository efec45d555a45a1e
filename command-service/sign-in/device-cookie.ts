// The device cookie (OWASP's defence against lockouts aimed at a victim): a browser that entered
// an account's correct password carries a sealed note of it, and its later password attempts
// for that account count against a budget of their own (sign-in-limits.ts).
import { randomBytes } from 'node:crypto';
import type { HttpContext } from '../../shared/http/http-state.js';
import { SIGN_IN_COOKIES } from '../../shared/sign-in/browser-cookies.js';
import type { BrowserState } from './browser-state.js';

interface DeviceNote {
  /** The account's key: the hash of its normalised email, as the failure throttle counts it. */
  readonly account: string;
  /** Random, so each browser's budget is its own. */
  readonly device: string;
}

const isDeviceNote = (value: unknown): value is DeviceNote =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as DeviceNote).account === 'string' &&
  typeof (value as DeviceNote).device === 'string';

/** This browser's device id for `account`, or null when it never signed in to that account here. */
export function knownDevice(cookies: BrowserState, ctx: HttpContext, account: string): string | null {
  const note = cookies.getSealed(ctx, SIGN_IN_COOKIES.device, isDeviceNote);
  return note !== null && note.account === account ? note.device : null;
}

/** Notes (again, for another 180 days) that this browser entered `account`'s password. */
export function rememberDevice(cookies: BrowserState, ctx: HttpContext, account: string, device: string | null): void {
  const note: DeviceNote = { account, device: device ?? randomBytes(16).toString('base64url') };
  cookies.setSealed(ctx, SIGN_IN_COOKIES.device, note);
}
