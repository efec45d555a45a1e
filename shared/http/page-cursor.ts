// Opaque, tamper-evident keyset cursors. A cursor names the last row of a page, (created_at,
// id) for newest-first lists, and is HMAC-SHA256 signed together with what it is bound to: the
// list it belongs to (for example the organization's pass list) and the search term. A cursor
// that was altered, or is replayed against another organization or another search, fails the
// signature check and is refused with 400.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../errors.js';

export interface KeysetPosition<Id extends number | string = number> {
  /** The row's timestamp exactly as stored (microseconds, UTC, ISO 8601), so no row is skipped. */
  readonly createdAt: string;
  /** The tie-breaker: an integer id, or a text id (such as a member's `emp_` id) for decodeTextId. */
  readonly id: Id;
}

export interface CursorBinding {
  /** Which list, including the tenant: `org-passes:42`. */
  readonly list: string;
  /** The normalised search term, or null. */
  readonly search: string | null;
}

const VERSION = 'v1';
const MAX_CURSOR_LENGTH = 512;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const CURSOR = /^v1\.([A-Za-z0-9_-]{1,300})\.([A-Za-z0-9_-]{43})$/;
const TEXT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class PageCursor {
  private readonly key: Buffer;

  /** `secret` of at least 32 bytes; none = a random one (cursors then die with the process). */
  constructor(secret?: string | Buffer | null) {
    const key = secret === undefined || secret === null ? randomBytes(32) : Buffer.from(secret);
    if (key.length < 32) throw new Error('the page cursor secret must be at least 32 bytes');
    this.key = key;
  }

  encode(position: KeysetPosition<number | string>, binding: CursorBinding): string {
    const payload = Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
    return `${VERSION}.${payload}.${this.sign(payload, binding).toString('base64url')}`;
  }

  /** Throws ValidationError for anything that is not a cursor this server issued for `binding` (integer ids). */
  decode(cursor: string, binding: CursorBinding): KeysetPosition {
    const { createdAt, id } = this.decodeAny(cursor, binding);
    if (!Number.isSafeInteger(id)) throw invalid();
    return { createdAt, id: id as number };
  }

  /** As decode, for lists whose tie-breaker is a text id. */
  decodeTextId(cursor: string, binding: CursorBinding): KeysetPosition<string> {
    const { createdAt, id } = this.decodeAny(cursor, binding);
    if (typeof id !== 'string' || !TEXT_ID.test(id)) throw invalid();
    return { createdAt, id };
  }

  private decodeAny(cursor: string, binding: CursorBinding): { createdAt: string; id: unknown } {
    const match = cursor.length <= MAX_CURSOR_LENGTH ? CURSOR.exec(cursor) : null;
    if (!match) throw invalid();
    const [, payload, signature] = match as unknown as [string, string, string];
    // Compared as text: base64url has spare bits, so two spellings can decode to the same bytes.
    const given = Buffer.from(signature, 'ascii');
    const expected = Buffer.from(this.sign(payload, binding).toString('base64url'), 'ascii');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
    const [createdAt, id] = parsed as [unknown, unknown];
    if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt)) throw invalid();
    return { createdAt, id };
  }

  private sign(payload: string, binding: CursorBinding): Buffer {
    return createHmac('sha256', this.key)
      .update(JSON.stringify([VERSION, binding.list, binding.search, payload]))
      .digest();
  }
}

function invalid(): ValidationError {
  return new ValidationError('cursor is invalid: pass back the next_cursor of the previous page of the same query unchanged');
}
