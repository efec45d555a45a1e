// What the rebuild's page writer (page-writer.ts) and its thread (page-writer-worker.ts) send
// each other: plain data, as a message between threads must be.
import type { Position } from '../shared/event-store/event-store.js';
import { ProjectionWriteError, type PreparedChanges } from './table-writer.js';

/** One page: every target's changes and the rebuild checkpoints they reach, in one transaction. */
export interface PageWrite {
  readonly changes: readonly PreparedChanges[];
  readonly projections: readonly string[];
  readonly last: Position;
}

export type WriterRequest = { readonly id: number; readonly page: PageWrite } | 'close';
export type WriterReply = { readonly id: number; readonly error?: WireError };

/** An error as it crosses the thread: a structured clone keeps an Error's message, not pg's fields. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly write?: { readonly projection: string; readonly firstEventId: string; readonly lastEventId: string; readonly cause: WireError };
}

// What pg's DatabaseError says beyond its message (the SQLSTATE `code` tells a retry what to do).
const DATABASE_ERROR_FIELDS = ['code', 'severity', 'detail', 'hint', 'schema', 'table', 'column', 'constraint', 'where'] as const;

export function toWire(error: unknown): WireError {
  if (error instanceof ProjectionWriteError) {
    const { projection, firstEventId, lastEventId } = error;
    return { name: error.name, message: error.message, fields: {}, write: { projection, firstEventId, lastEventId, cause: toWire(error.cause) } };
  }
  const fields: Record<string, string> = {};
  for (const field of DATABASE_ERROR_FIELDS) {
    const value = (error as Record<string, unknown> | null)?.[field];
    if (typeof value === 'string') fields[field] = value;
  }
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack, fields } : { name: 'Error', message: String(error), fields };
}

export function fromWire(wire: WireError): Error {
  if (wire.write) return new ProjectionWriteError(wire.write.projection, wire.write.firstEventId, wire.write.lastEventId, fromWire(wire.write.cause));
  // The stack of the thread where it was thrown, which is where it tells something.
  return Object.assign(new Error(wire.message), { name: wire.name, stack: wire.stack }, wire.fields);
}
