// Text PostgreSQL cannot store (shared/db/storable-text.ts) is refused where a request is read
// (JSON bodies, forms, query parameters), so it never reaches a query, where it is a 500, or an
// event, where it fails the append or a projection far from the request that sent it.
import { ValidationError } from '../errors.js';
import { isStorableText } from '../db/storable-text.js';

/** The end of every message about such text. */
export const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired surrogates';

/** Where a parsed value holds unstorable text: `path` as `a[0].b` ('' = the value itself); `key` when it is a key there. */
interface UnstorableText {
  readonly path: string;
  readonly key: boolean;
}

/**
 * The first string or object key, at any depth, that is not storable; null when there is none.
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
function findUnstorableText(value: unknown): UnstorableText | null {
  const pending: Array<[unknown, string]> = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (!isStorableText(item)) return { path, key: false };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${path}[${i}]`]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      if (entries.some(([name]) => !isStorableText(name))) return { path, key: true };
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, child] = entries[i] as [string, unknown];
        pending.push([child, path ? `${path}.${name}` : name]);
      }
    }
  }
  return null;
}

/**
 * The first name (`name: null`) or parameter (`name`) of flat name=value pairs, a query or a form,
 * that is not storable; null when there is none.
 */
export function findUnstorableParameter(
  parameters: Readonly<Record<string, string | readonly string[] | undefined>>,
): { readonly name: string | null } | null {
  for (const [name, value] of Object.entries(parameters)) {
    if (!isStorableText(name)) return { name: null };
    if ((typeof value === 'string' ? [value] : (value ?? [])).some((one) => !isStorableText(one))) return { name };
  }
  return null;
}

/** A deeply nested body's path is cut here, so the message stays short. */
const MAX_PATH_LENGTH = 200;

/** A client-readable message for a JSON body: `first_name must not ...`, `field names in a.b must not ...`. */
function unstorableTextMessage(found: UnstorableText, subject: string): string {
  const path = found.path.length > MAX_PATH_LENGTH ? `${found.path.slice(0, MAX_PATH_LENGTH)}...` : found.path;
  if (found.key) return `field names${path ? ` in ${path}` : ''} ${UNSTORABLE_TEXT}`;
  return `${path || subject} ${UNSTORABLE_TEXT}`;
}

/** Refuses (400) a parsed request body holding text PostgreSQL cannot store. */
export function refuseUnstorableBody(body: unknown): void {
  const unstorable = findUnstorableText(body);
  if (unstorable !== null) throw new ValidationError(unstorableTextMessage(unstorable, 'request body'));
}
