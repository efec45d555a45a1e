// A browser's pending passkey ceremony: kept in PostgreSQL (passkey-challenges.ts), found through
// an HttpOnly SameSite=Strict cookie that holds its random handle, and spent by the verify that
// takes it. Only our own pages post a ceremony, so the cookie is Strict. Used by the sign-in and
// account routes (passkey-routes.ts) and by the console's join page.
import type { Knex } from 'knex';
import type { HttpContext } from '../../../shared/http/http-state.js';
import { clearCookieHeader, cookieName, setCookieHeader, type CookieSpec } from '../../../shared/sign-in/browser-cookies.js';
import { CEREMONY_TTL_SECONDS, PasskeyChallenges, type CeremonyPurpose, type PendingCeremony } from './passkey-challenges.js';

const CEREMONY_COOKIE: CookieSpec = { name: 'gp_passkey', sameSite: 'Strict', maxAgeSeconds: CEREMONY_TTL_SECONDS };

export interface BrowserCeremonies {
  /** Remembers the ceremony (replacing the browser's previous one) and sets its cookie. */
  begin(ctx: HttpContext, ceremony: Omit<PendingCeremony, 'expiresAt'>, now: Date): Promise<void>;
  /** The browser's ceremony of this purpose, spent now whatever the outcome; null when none is live. */
  take(ctx: HttpContext, purpose: CeremonyPurpose, now: Date): Promise<PendingCeremony | null>;
}

/** `issuer`: an https issuer gets the cookie's `__Host-` name and Secure flag. */
export function browserCeremonies(db: Knex, issuer: string): BrowserCeremonies {
  const https = new URL(issuer).protocol === 'https:';
  const challenges = new PasskeyChallenges(db);
  return {
    async begin(ctx, ceremony, now) {
      const handle = await challenges.begin(ceremony, now, ctx.cookies.get(cookieName(CEREMONY_COOKIE, https)));
      ctx.append('Set-Cookie', setCookieHeader(CEREMONY_COOKIE, handle, https));
    },
    async take(ctx, purpose, now) {
      const ceremony = await challenges.take(ctx.cookies.get(cookieName(CEREMONY_COOKIE, https)), purpose, now);
      ctx.append('Set-Cookie', clearCookieHeader(CEREMONY_COOKIE, https));
      return ceremony;
    },
  };
}
