// A rebuild's page writes, made by a worker thread on a connection of its own. A page's write is
// a dozen round trips; on the main thread each answer waited until the replay's JavaScript (the
// next page, projected meanwhile) let go of the thread, which measured as more than half of a
// write's time, and the replay then waited for the write. The worker answers at once.
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
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
  return error instanceof Error ? { name: error.name, message: error.message, fields } : { name: 'Error', message: String(error), fields };
}

export function fromWire(wire: WireError): Error {
  if (wire.write) return new ProjectionWriteError(wire.write.projection, wire.write.firstEventId, wire.write.lastEventId, fromWire(wire.write.cause));
  return Object.assign(new Error(wire.message), { name: wire.name }, wire.fields);
}

const here = fileURLToPath(import.meta.url);
export const PAGE_WRITER_APPLICATION_NAME = 'guestpass rebuild writer';

/**
 * The thread, from the build (page-writer-worker.js) or from the TypeScript source. A thread
 * does not get the loader the process runs the source with (Node.js 20 applies the `--import`
 * hooks to the main thread only), so from the source it registers tsx's require hook itself.
 */
function startThread(workerData: object): Worker {
  if (path.extname(here) !== '.ts') return new Worker(path.join(path.dirname(here), 'page-writer-worker.js'), { workerData });
  const require = createRequire(import.meta.url);
  const source = path.join(path.dirname(here), 'page-writer-worker.ts');
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(source)});`;
  return new Worker(code, { eval: true, workerData });
}

/** Writes pages one after another in its thread. After a failed write, close it and start another. */
export class PageWriter {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private failure: Error | null = null;
  private readonly exited: Promise<void>;

  constructor(connectionString: string) {
    this.worker = startThread({ connectionString, applicationName: PAGE_WRITER_APPLICATION_NAME });
    this.worker.on('message', (reply: WriterReply) => {
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error) call?.reject(fromWire(reply.error));
      else call?.resolve();
    });
    this.worker.on('error', (error) => this.fail(error));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.fail(new Error(`the page writer's thread ended (exit code ${code})`));
        resolve();
      }),
    );
  }

  write(page: PageWrite): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, page } satisfies WriterRequest);
    });
  }

  /** Ends the thread once its writes are done and its connection closed; a stuck thread is stopped after a while. */
  async close(): Promise<void> {
    this.worker.postMessage('close' satisfies WriterRequest);
    const timer = setTimeout(() => void this.worker.terminate(), 10_000);
    await this.exited;
    clearTimeout(timer);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}
