// Browsers (the sign-in tests' fetch-based one) holding a console session, for the HTTP-level tests.
import { randomBytes, randomUUID } from 'node:crypto';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../../shared/oauth/opaque-credentials.js';
import { newSid, signInSessionDecider } from '../../../shared/sign-in/session-decider.js';
import type { Stack } from '../../support/stack.js';
import { Browser } from '../../sign-in/support/browser.js';

/** A browser holding a session of `userId` that began `ageSeconds` ago (as a cookie kept since then would). */
export async function browserSignedInAgo(stack: Stack, user: { userId: number; orgId: number }, ageSeconds = 0): Promise<Browser> {
  const secret = randomBytes(32).toString('base64url');
  const now = new Date();
  const authTime = new Date(now.getTime() - ageSeconds * 1000).toISOString();
  await stack.deps.handler.handle(
    oauthStreams.signInSession(sha256Hex(secret)),
    signInSessionDecider,
    { type: 'StartSignInSession', data: { sessionHash: sha256Hex(secret), sid: newSid(), userId: user.userId, orgId: user.orgId, authTime, amr: ['pwd'] } },
    { correlationId: randomUUID(), actor: { kind: 'user', id: user.userId }, now },
  );
  const browser = new Browser(stack.baseUrl);
  browser.jar.set('gp_session', secret);
  return browser;
}
