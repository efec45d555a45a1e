// Checks of the answers the organization API and the user-delegated API share: never stored,
// the Bearer challenges of a 401 and a 403 (RFC 6750), and the 429 with every RateLimit header.
import { expect } from 'chai';
import { bearerErrorSchema, businessErrorSchema, rateLimitErrorSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from '../org-api/response-shapes.js';
import type { ApiResponse, Stack } from './stack.js';

/** Every answer under /api is not to be stored by any cache. */
export function expectNoStore(res: ApiResponse, what = 'response'): void {
  expect(res.headers.get('cache-control'), `${what}: Cache-Control`).to.equal('no-store');
}

/** The 400 of a refused request: the business error shape with `error` as the message, never stored. */
export function expectBadRequest(res: ApiResponse, error: string, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(400);
  expectShape(res.body, businessErrorSchema, what);
  expect(res.body, what).to.include({ success: false, error, code: 'validation_failed' });
  expectNoStore(res, what);
}

/** Runs `refused`, then checks that no event was appended and the list (`listed`) is as it was. */
export async function expectNothingWritten(stack: Stack, listed: () => Promise<unknown>, refused: () => Promise<void>): Promise<void> {
  const [head, before] = [await stack.store.headPosition(), await listed()];
  await refused();
  expect(await stack.store.headPosition()).to.deep.equal(head);
  expect(await listed()).to.deep.equal(before);
}

/** The one 401 of every missing, malformed or refused credential: nothing tells the cases apart. */
export function expectInvalidToken(res: ApiResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(401);
  expectShape(res.body, bearerErrorSchema, what);
  expect(res.text, what).to.equal('{"error":"invalid_token"}');
  expect(res.headers.get('www-authenticate'), what).to.equal('Bearer realm="guestpass", error="invalid_token"');
  expectNoStore(res, what);
}

export function expectInsufficientScope(res: ApiResponse, scope: string, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.equal(403);
  expectShape(res.body, bearerErrorSchema, what);
  expect(res.body, what).to.deep.equal({ error: 'insufficient_scope' });
  expect(res.headers.get('www-authenticate'), what).to.equal(`Bearer realm="guestpass", error="insufficient_scope", scope="${scope}"`);
  expectNoStore(res, what);
}

/**
 * The 429 of the bucket `policy` of `limit` requests per 60 s window, sent at `sentAt` (epoch seconds): every
 * header the spec lists, agreeing with the body's retry_after.
 */
export function expectRateLimited(res: ApiResponse, limit: number, sentAt: number, policy: string): void {
  expect(res.status).to.equal(429);
  expectShape(res.body, rateLimitErrorSchema);
  const retry = res.body.retry_after as number;
  expect(retry).to.be.within(1, 60);
  expect(res.headers.get('retry-after')).to.equal(String(retry));
  expect(res.headers.get('ratelimit')).to.equal(`"${policy}";r=0;t=${retry}`);
  expect(res.headers.get('ratelimit-policy')).to.equal(`"${policy}";q=${limit};w=60`);
  expect(res.headers.get('ratelimit-limit')).to.equal(String(limit));
  expect(res.headers.get('ratelimit-remaining')).to.equal('0');
  expect(res.headers.get('ratelimit-reset')).to.equal(String(retry));
  expect(Number(res.headers.get('x-ratelimit-reset'))).to.be.within(sentAt + retry, sentAt + retry + 2);
  expectNoStore(res);
}
