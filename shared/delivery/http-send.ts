// One POST to an SMS provider, bounded in time, and what its status says about a retry. Shared by
// the webhook and Twilio adapters; each decides which 4xx means the recipient.
import http from 'node:http';
import https from 'node:https';
import { DeliveryFailure } from './delivery-ports.js';

export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
/** A reply body larger than this is not read for an id. */
const MAX_BODY_CHARS = 64 * 1024;

export interface HttpReply {
  readonly status: number;
  /** The body parsed as JSON, when it was JSON; null otherwise. */
  readonly json: unknown;
}

/**
 * Keep-alive connections per scheme, shared by the SMS adapters. node:http rather than fetch: a
 * fetch costs about four times the CPU (WHATWG streams, AbortSignals) for the same exchange, and
 * a busy service sends one SMS per batch of passes. Idle sockets do not keep the process alive.
 */
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
} as const;

/**
 * POSTs and reads the whole reply (body discarded unless it is JSON), within `timeoutMs`.
 * Redirects are not followed: a POST redirected is a misconfigured URL, refused by the caller.
 * A network error or time-out is a transient DeliveryFailure; a reply whose body is cut short
 * still counts by its status.
 */
export function postForReply(
  provider: string,
  url: string,
  init: { headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<HttpReply> {
  return new Promise<HttpReply>((resolve, reject) => {
    const target = new URL(url);
    const scheme = target.protocol === 'https:' ? 'https:' : 'http:';
    if (target.protocol !== scheme) {
      reject(new DeliveryFailure('provider_rejected', true, `${provider} URL is not http(s)`));
      return;
    }
    let settled = false;
    let response: http.IncomingMessage | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: { reply: HttpReply } | { error: unknown; timedOut: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if ('reply' in outcome) return resolve(outcome.reply);
      request.destroy();
      // The status is what counts; a body cut short carries nothing we need.
      if (response) return resolve({ status: response.statusCode ?? 0, json: null });
      const code = (outcome.error as { code?: unknown } | null)?.code;
      const suffix = typeof code === 'string' ? ` (${code})` : '';
      reject(new DeliveryFailure('provider_unavailable', false, outcome.timedOut ? `${provider} did not answer in time` : `${provider} unreachable${suffix}`));
    };
    const request = (scheme === 'https:' ? https : http).request(
      target,
      { method: 'POST', agent: AGENTS[scheme], headers: { ...init.headers, 'Content-Length': String(Buffer.byteLength(init.body)) } },
      (res) => {
        response = res;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_BODY_CHARS * 4) chunks.push(chunk);
        });
        res.on('end', () => {
          const text = size <= MAX_BODY_CHARS * 4 ? Buffer.concat(chunks).toString('utf8') : '';
          finish({ reply: { status: res.statusCode ?? 0, json: jsonOf(text, res.headers['content-type']) } });
        });
        res.on('error', (error) => finish({ error, timedOut: false }));
        res.on('aborted', () => finish({ error: null, timedOut: false }));
      },
    );
    const timer = setTimeout(() => finish({ error: null, timedOut: true }), Math.max(0, timeoutMs));
    request.on('error', (error) => finish({ error, timedOut: false }));
    request.end(init.body);
  });
}

/** The body parsed as JSON when it is JSON (or says no type) and not too large; null otherwise. */
function jsonOf(text: string, contentType: string | undefined): unknown {
  if (text.length === 0 || text.length > MAX_BODY_CHARS || !/json/i.test(contentType ?? 'json')) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A JSON object's string field, or null. */
export function stringField(json: unknown, ...names: string[]): string | null {
  if (typeof json !== 'object' || json === null) return null;
  for (const name of names) {
    const value = (json as Record<string, unknown>)[name];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return null;
}

/** 429, 408, 5xx: the provider may take it later. */
export function isTransientStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}
