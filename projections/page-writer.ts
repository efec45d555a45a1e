// A rebuild's page writes, made by a worker thread on a connection of its own. A page's write is
// a dozen round trips; on the main thread each answer waited until the replay's JavaScript (the
// next page, projected meanwhile) let go of the thread, which measured as about half of a
// write's time, and the replay then waited for the write. The worker answers at once.
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { fromWire, type PageWrite, type WriterReply, type WriterRequest } from './page-write-wire.js';

const here = fileURLToPath(import.meta.url);
export const PAGE_WRITER_APPLICATION_NAME = 'guestpass rebuild writer';

/**
 * The thread, from the build (page-writer-worker.js) or from the TypeScript source. A thread
 * does not get the loader the process runs the source with (Node.js 20 applies the `--import`
 * hooks to the main thread only), so from the source it registers tsx's require hook itself
 * (which is why nothing the thread loads may use a top-level await).
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
      this.worker.postMessage({ id, page } satisfies WriterRequest); // throws for what cannot be cloned
      this.pending.set(id, { resolve, reject });
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
