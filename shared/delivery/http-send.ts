// One POST to an SMS provider, bounded in time, and what its status says about a retry. Shared by
// the webhook and Twilio adapters; each decides which 4xx means the recipient.
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
 * POSTs and reads the whole reply (body discarded unless it is JSON), within `timeoutMs`.
 * Redirects are not followed: a POST redirected is a misconfigured URL, refused by the caller.
 * A network error or time-out is a transient DeliveryFailure.
 */
export async function postForReply(
  provider: string,
  url: string,
  init: { headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<HttpReply> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: init.headers,
      body: init.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    let text = '';
    try {
      text = await response.text();
    } catch {
      // The status is what counts; a body cut short carries nothing we need.
    }
    let json: unknown = null;
    if (text.length > 0 && text.length <= MAX_BODY_CHARS && /json/i.test(response.headers.get('content-type') ?? 'json')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = null;
      }
    }
    return { status: response.status, json };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    const timedOut = name === 'TimeoutError' || name === 'AbortError';
    // fetch fails with a TypeError whose cause holds the system error code (ECONNREFUSED, ...).
    const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
    const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
    throw new DeliveryFailure('provider_unavailable', false, timedOut ? `${provider} did not answer in time` : `${provider} unreachable${code}`);
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
