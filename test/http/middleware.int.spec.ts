// The shared HTTP middleware over real HTTP, without a database: error shapes, headers, body
// limits and media types, request ids.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import Router from '@koa/router';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import {
  ConflictError,
  InsufficientScopeError,
  InvalidTokenError,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  ValidationError,
} from '../../shared/errors.js';
import { REDACTED_PATHS } from '../../shared/logger.js';
import { requestId } from '../../shared/http/request-id.js';
import { requestLogger } from '../../shared/http/request-logger.js';
import { errorMiddleware } from '../../shared/http/error-middleware.js';
import { securityHeaders } from '../../shared/http/security-headers.js';
import { notFound } from '../../shared/http/not-found.js';
import { jsonBody } from '../../shared/http/json-body.js';
import { validateQuery } from '../../shared/http/schema-validation.js';
import { readProtocolForm } from '../../command-service/oauth/form-body.js';
import { readFormFields } from '../../command-service/sign-in/page-form.js';
import type { HttpState } from '../../shared/http/http-state.js';

describe('shared HTTP middleware', () => {
  let server: http.Server;
  let base: string;
  const logLines: Array<Record<string, unknown>> = [];

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
    const router = new Router<HttpState>();
    router.get('/api/v1/throw/validation', () => {
      throw new ValidationError('first_name is required', ['first_name is required']);
    });
    router.get('/api/v1/throw/not-found', () => {
      throw new NotFoundError('facility not found');
    });
    router.get('/api/v1/throw/conflict', () => {
      throw new ConflictError('facility is suspended');
    });
    router.get('/api/v1/throw/quota', () => {
      throw new QuotaExceededError(10, 9, 2);
    });
    router.get('/api/v1/throw/token', () => {
      throw new InvalidTokenError('some detail that must not reach the client');
    });
    router.get('/api/v1/throw/scope', () => {
      throw new InsufficientScopeError('org:passes:write');
    });
    router.get('/api/v1/throw/rate', () => {
      throw new RateLimitedError(42, 300, 60, 'org-api');
    });
    router.get('/api/v1/throw/bug', () => {
      throw new TypeError('secret internal detail');
    });
    router.get('/api/v1/throw/koa', (ctx) => ctx.throw(400, 'bad thing'));
    router.get('/api/v1/query', validateQuery({
      type: 'object',
      additionalProperties: false,
      properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 30 }, q: { type: 'string' } },
    }), (ctx) => {
      ctx.body = ctx.state.query;
    });
    router.post('/api/v1/echo', jsonBody(), (ctx) => {
      ctx.body = { received: ctx.request.body ?? null };
    });
    // A form read in each error family that reads forms: the OAuth protocol endpoints' and the pages'.
    router.post('/api/oauth/form', async (ctx) => {
      ctx.body = { received: await readProtocolForm(ctx, 1024) };
    });
    router.post('/api/v1/form', async (ctx) => {
      ctx.body = { received: await readFormFields(ctx) };
    });
    const app = new Koa<HttpState>();
    app.use(requestId());
    app.use(requestLogger(logger));
    app.use(errorMiddleware());
    app.use(securityHeaders());
    app.use(notFound());
    app.use(router.routes());
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function get(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(base + path, { headers });
    return { res, body: (await res.json()) as Record<string, unknown> };
  }

  it('renders business errors as {success: false, error, code}', async () => {
    const v = await get('/api/v1/throw/validation');
    expect(v.res.status).to.equal(400);
    expect(v.body).to.deep.equal({ success: false, error: 'first_name is required', code: 'validation_failed', details: ['first_name is required'] });
    const n = await get('/api/v1/throw/not-found');
    expect(n.res.status).to.equal(404);
    expect(n.body).to.deep.equal({ success: false, error: 'facility not found', code: 'not_found' });
    const c = await get('/api/v1/throw/conflict');
    expect(c.res.status).to.equal(409);
    expect(c.body).to.deep.equal({ success: false, error: 'facility is suspended', code: 'conflict' });
  });

  it('renders the quota error exactly as the spec says', async () => {
    const { res, body } = await get('/api/v1/throw/quota');
    expect(res.status).to.equal(402);
    expect(body).to.deep.equal({
      code: 'CAPACITY_EXCEEDED',
      message: 'monthly guest invite allowance exceeded: 9 of 10 used, 2 requested',
      dimension: 'guest_invites',
      limit: 10,
      current: 9,
      requested: 2,
    });
  });

  it('renders Bearer challenges, never leaking the detail of a 401', async () => {
    const t = await get('/api/v1/throw/token');
    expect(t.res.status).to.equal(401);
    expect(t.body).to.deep.equal({ error: 'invalid_token' });
    expect(t.res.headers.get('www-authenticate')).to.match(/^Bearer .*error="invalid_token"/);
    const s = await get('/api/v1/throw/scope');
    expect(s.res.status).to.equal(403);
    expect(s.body).to.deep.equal({ error: 'insufficient_scope' });
    expect(s.res.headers.get('www-authenticate')).to.match(/^Bearer .*error="insufficient_scope", scope="org:passes:write"$/);
  });

  it('renders 429 with every rate-limit header and retry_after', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { res, body } = await get('/api/v1/throw/rate');
    expect(res.status).to.equal(429);
    expect(body).to.deep.equal({ error: 'temporarily_unavailable', retry_after: 42 });
    expect(res.headers.get('retry-after')).to.equal('42');
    expect(res.headers.get('ratelimit')).to.equal('"org-api";r=0;t=42');
    expect(res.headers.get('ratelimit-policy')).to.equal('"org-api";q=300;w=60');
    expect(res.headers.get('ratelimit-limit')).to.equal('300');
    expect(res.headers.get('ratelimit-remaining')).to.equal('0');
    expect(res.headers.get('ratelimit-reset')).to.equal('42');
    expect(Number(res.headers.get('x-ratelimit-reset'))).to.be.within(before + 42, before + 44);
  });

  it('hides unexpected errors behind a 500 with no stack, and logs them with the request id', async () => {
    const { res, body } = await get('/api/v1/throw/bug', { 'X-Request-Id': 'bug-hunt-1' });
    expect(res.status).to.equal(500);
    expect(body).to.deep.equal({ success: false, error: 'internal error', code: 'internal_error' });
    const line = logLines.find((l) => l.reqId === 'bug-hunt-1' && l.msg === 'unhandled error');
    expect(line, 'error log line').to.exist;
    expect(JSON.stringify(line)).to.include('secret internal detail');
  });

  it('renders exposed Koa errors as business errors', async () => {
    const { res, body } = await get('/api/v1/throw/koa');
    expect(res.status).to.equal(400);
    expect(body).to.deep.equal({ success: false, error: 'bad thing', code: 'bad_request' });
  });

  it('answers an unknown endpoint with a 404 business error', async () => {
    const { res, body } = await get('/api/v1/nothing-here');
    expect(res.status).to.equal(404);
    expect(body).to.include({ success: false, code: 'not_found' });
  });

  it('sets the security headers and Cache-Control: no-store on every /api answer, errors included', async () => {
    for (const path of ['/api/v1/throw/validation', '/api/v1/throw/token', '/api/v1/throw/bug', '/api/v1/nothing-here']) {
      const { res } = await get(path);
      expect(res.headers.get('cache-control'), path).to.equal('no-store');
      expect(res.headers.get('x-content-type-options'), path).to.equal('nosniff');
      expect(res.headers.get('referrer-policy'), path).to.equal('no-referrer');
      expect(res.headers.get('x-frame-options'), path).to.equal('DENY');
    }
  });

  it('keeps a sane incoming X-Request-Id and replaces anything else with a UUID', async () => {
    const kept = await get('/api/v1/throw/not-found', { 'X-Request-Id': 'abc-123_x.y:z' });
    expect(kept.res.headers.get('x-request-id')).to.equal('abc-123_x.y:z');
    for (const bad of ['', ' spaced out', 'x'.repeat(200), '<script>', 'a\tb']) {
      const { res } = await get('/api/v1/throw/not-found', bad ? { 'X-Request-Id': bad } : {});
      expect(res.headers.get('x-request-id'), JSON.stringify(bad)).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });

  it('logs one line per request with the request id, and never a credential header or the query string', async () => {
    const key = `svc_sk_${'z'.repeat(43)}`;
    await get('/api/v1/throw/token?search=private%40example.com', { Authorization: `Bearer ${key}`, 'X-Request-Id': 'log-check-1' });
    const lines = logLines.filter((l) => l.reqId === 'log-check-1');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ method: 'GET', path: '/api/v1/throw/token', status: 401 });
    const text = JSON.stringify(logLines);
    expect(text).not.to.include(key);
    expect(text).not.to.include('private');
  });

  describe('JSON bodies', () => {
    async function post(body: string | Buffer, contentType: string | null, extra: Record<string, string> = {}) {
      const headers: Record<string, string> = { ...extra };
      if (contentType) headers['Content-Type'] = contentType;
      const res = await fetch(`${base}/api/v1/echo`, { method: 'POST', headers, body });
      return { res, body: (await res.json()) as Record<string, unknown> };
    }

    it('parses a JSON object', async () => {
      const { res, body } = await post('{"a":1}', 'application/json; charset=utf-8');
      expect(res.status).to.equal(200);
      expect(body).to.deep.equal({ received: { a: 1 } });
    });

    it('refuses malformed JSON with 400', async () => {
      for (const text of ['{"a":', '{a:1}', '"just a string"', 'nul']) {
        const { res, body } = await post(text, 'application/json');
        expect(res.status, text).to.equal(400);
        expect(body, text).to.include({ success: false, code: 'validation_failed' });
      }
    });

    it('refuses other media types with 415', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', null]) {
        const { res, body } = await post('a=1', type);
        expect(res.status, String(type)).to.equal(415);
        expect(body, String(type)).to.include({ success: false, code: 'unsupported_media_type' });
      }
    });

    it('refuses bodies over 64 KiB with 413, declared or streamed', async () => {
      const big = JSON.stringify({ notes: 'x'.repeat(70 * 1024) });
      const declared = await post(big, 'application/json');
      expect(declared.res.status).to.equal(413);
      expect(declared.body).to.include({ success: false, code: 'payload_too_large' });
      const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${base}/api/v1/echo`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end(big);
      });
      expect(streamed.status).to.equal(413);
      expect(JSON.parse(streamed.body)).to.include({ code: 'payload_too_large' });
    });

    it('refuses NUL characters and unpaired surrogates in any string or key, at any depth, with 400 naming where', async () => {
      for (const [text, message] of [
        ['{"first_name":"Nul\\u0000Byte"}', 'first_name must not contain NUL characters or unpaired surrogates'],
        ['{"first_name":"\\ud800"}', 'first_name must not contain NUL characters or unpaired surrogates'],
        ['{"first_name":"x\\udc00"}', 'first_name must not contain NUL characters or unpaired surrogates'],
        ['{"a":[{"b":"ok"},{"b":"\\udbff\\udbff\\udc00"}]}', 'a[1].b must not contain NUL characters or unpaired surrogates'],
        ['{"a":{"b\\u0000":1}}', 'field names in a must not contain NUL characters or unpaired surrogates'],
        ['{"\\ud800":1}', 'field names must not contain NUL characters or unpaired surrogates'],
        ['["\\u0000"]', '[0] must not contain NUL characters or unpaired surrogates'],
      ] as const) {
        const { res, body } = await post(text, 'application/json');
        expect(res.status, text).to.equal(400);
        expect(body, text).to.deep.equal({ success: false, error: message, code: 'validation_failed' });
      }
      // As deep as 64 KiB allows: still a quick 400, with the path cut short.
      const depth = 20_000;
      const deep = await post(`${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`, 'application/json');
      expect(deep.res.status).to.equal(400);
      expect(deep.body.error).to.equal(`${'[0]'.repeat(67).slice(0, 200)}... must not contain NUL characters or unpaired surrogates`);
      // A surrogate pair (an emoji) is well-formed text.
      const emoji = await post('{"a":"\\ud83d\\ude00 ok"}', 'application/json');
      expect(emoji.res.status).to.equal(200);
      expect(emoji.body).to.deep.equal({ received: { a: '\u{1F600} ok' } });
    });

    it('parses every +json media type as JSON', async () => {
      for (const type of ['application/vnd.example+json', 'application/problem+json; charset=utf-8', 'application/json']) {
        const { res, body } = await post('{"a":1}', type);
        expect(res.status, type).to.equal(200);
        expect(body, type).to.deep.equal({ received: { a: 1 } });
      }
    });

    it('answers 400 for a body its Content-Encoding does not decode, 415 for an unknown encoding', async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const { res, body } = await post('{"first_name":"A"}', 'application/json', { 'Content-Encoding': encoding });
        expect(res.status, encoding).to.equal(400);
        expect(body, encoding).to.deep.equal({
          success: false,
          error: `request body could not be decoded (Content-Encoding: ${encoding})`,
          code: 'validation_failed',
        });
      }
      const truncated = await post(gzipSync('{"first_name":"A"}').subarray(0, 15), 'application/json', { 'Content-Encoding': 'gzip' });
      expect(truncated.res.status).to.equal(400);
      const unknown = await post('{"a":1}', 'application/json', { 'Content-Encoding': 'xz' });
      expect(unknown.res.status).to.equal(415);
      expect(unknown.body).to.deep.equal({ success: false, error: 'unsupported content encoding', code: 'unsupported_media_type' });
      const valid = await post(gzipSync('{"a":1}'), 'application/json', { 'Content-Encoding': 'gzip' });
      expect(valid.res.status).to.equal(200);
      expect(valid.body).to.deep.equal({ received: { a: 1 } });
    });

    it('accepts a body of exactly 64 KiB', async () => {
      const prefix = '{"n":"';
      const text = prefix + 'x'.repeat(64 * 1024 - prefix.length - 2) + '"}';
      expect(Buffer.byteLength(text)).to.equal(64 * 1024);
      const { res } = await post(text, 'application/json');
      expect(res.status).to.equal(200);
    });
  });

  describe('query validation', () => {
    it('converts plain integers and applies defaults', async () => {
      expect((await get('/api/v1/query')).body).to.deep.equal({ limit: 30 });
      expect((await get('/api/v1/query?limit=7&q=x')).body).to.deep.equal({ limit: 7, q: 'x' });
    });

    it('refuses bad numbers, repeats and unknown parameters with clear 400s', async () => {
      for (const [query, message] of [
        ['limit=0', "'limit' must be >= 1"],
        ['limit=101', "'limit' must be <= 100"],
        ['limit=abc', "'limit' must be integer"],
        ['limit=1.5', "'limit' must be integer"],
        ['limit=0x10', "'limit' must be integer"],
        ['limit=', "'limit' must be integer"],
        ['limit=1&limit=2', "query parameter 'limit' must be given once"],
        ['bogus=1', "unknown parameter 'bogus'"],
      ] as const) {
        const { res, body } = await get(`/api/v1/query?${query}`);
        expect(res.status, query).to.equal(400);
        expect(body.error, query).to.include(message);
      }
    });

    it('refuses NUL characters in parameter names and values with 400, before anything else', async () => {
      for (const [query, message] of [
        ['q=a%00b', "query parameter 'q' must not contain NUL characters or unpaired surrogates"],
        ['q=ok&q=%00', "query parameter 'q' must not contain NUL characters or unpaired surrogates"],
        ['bogus=%00', "query parameter 'bogus' must not contain NUL characters or unpaired surrogates"],
        ['%00=1', 'query parameter names must not contain NUL characters or unpaired surrogates'],
      ] as const) {
        const { res, body } = await get(`/api/v1/query?${query}`);
        expect(res.status, query).to.equal(400);
        expect(body, query).to.deep.equal({ success: false, error: message, code: 'validation_failed' });
      }
    });
  });

  describe('form bodies', () => {
    async function postForm(path: string, text: string) {
      const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: text });
      return { res, body: (await res.json()) as Record<string, unknown> };
    }

    it('refuses NUL characters in field names and values with 400, in the caller\'s error family', async () => {
      const page = await postForm('/api/v1/form', 'email=a%00b%40example.com&password=x');
      expect(page.res.status).to.equal(400);
      expect(page.body).to.deep.equal({ success: false, error: 'email must not contain NUL characters or unpaired surrogates', code: 'validation_failed' });
      const pageName = await postForm('/api/v1/form', 'a%00=1');
      expect(pageName.body).to.deep.equal({ success: false, error: 'field names must not contain NUL characters or unpaired surrogates', code: 'validation_failed' });
      // The protocol endpoints answer RFC 6749's invalid_request.
      const oauth = await postForm('/api/oauth/form', 'grant_type=refresh_token&refresh_token=x%00');
      expect(oauth.res.status).to.equal(400);
      expect(oauth.body).to.deep.equal({
        error: 'invalid_request',
        error_description: 'Parameters must not contain NUL characters or unpaired surrogates.',
      });
      const fine = await postForm('/api/v1/form', 'email=a%40example.com&x=%F0%9F%98%80');
      expect(fine.res.status).to.equal(200);
      expect(fine.body).to.deep.equal({ received: { email: 'a@example.com', x: '\u{1F600}' } });
    });
  });
});
