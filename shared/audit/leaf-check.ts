// What is wrong with a leaf, given the notary's record of it and what the log holds now at its
// place: the sample check (projections/audit-sample-check.ts) and the verifier name the same
// failures the same way.
import { comparePositions, parsePosition } from '../event-store/event-store.js';

export type LeafProblem = 'changed' | 'missing' | 'extra' | 'reordered';

export interface LeafFinding {
  readonly problem: LeafProblem;
  readonly detail: string;
}

/**
 * `recorded`: the leaf as notarized; `found`: the first event the log now holds after the
 * previous leaf's position (null: none), with the hash it has now. Null when they agree.
 */
export function checkLeaf(
  recorded: { readonly index: number; readonly eventId: string; readonly position: string; readonly hash: Buffer },
  found: { readonly id: string; readonly position: string; readonly hash: Buffer } | null,
): LeafFinding | null {
  const at = `leaf ${recorded.index} (position ${recorded.position}, event ${recorded.eventId})`;
  if (!found) return { problem: 'missing', detail: `${at}: no event in the log` };
  const order = comparePositions(parsePosition(found.position), parsePosition(recorded.position));
  if (found.id === recorded.eventId) {
    if (order !== 0) return { problem: 'reordered', detail: `${at}: the event is now at position ${found.position}` };
    return found.hash.equals(recorded.hash) ? null : { problem: 'changed', detail: `${at}: its content differs from the notarized event` };
  }
  if (order < 0) return { problem: 'extra', detail: `${at}: event ${found.id} at position ${found.position} comes before it and was never notarized` };
  if (order === 0) return { problem: 'reordered', detail: `${at}: event ${found.id} is at its position` };
  return { problem: 'missing', detail: `${at}: the next event in the log is ${found.id} at position ${found.position}` };
}
