// The thread of page-writer.ts: makes each write it is sent in a transaction of its own, in order.
import { parentPort, workerData } from 'node:worker_threads';
import { createPgPool } from '../shared/db/pg-pool.js';
import { TableWriter } from './table-writer.js';
import { toWire, type PageWrite, type WriterReply, type WriterRequest } from './page-write-wire.js';

const { connectionString, applicationName } = workerData as { connectionString: string; applicationName: string };
const pool = createPgPool(connectionString, 1, { applicationName });
const writer = new TableWriter();
const port = parentPort!;
let writing: Promise<unknown> = Promise.resolve();

async function write(page: PageWrite): Promise<void> {
  const client = await pool.connect();
  try {
    // Rebuild checkpoints are written with the rows, so a lost commit loses both and a resume re-reads.
    await client.query('BEGIN; SET LOCAL synchronous_commit = off');
    for (const changes of page.changes) await writer.save(client, changes);
    await client.query(`UPDATE projection_rebuilds SET position_commit = $2, position_prepare = $3, updated_at = now() WHERE name = ANY($1)`, [
      page.projections,
      page.last.commit.toString(),
      page.last.prepare.toString(),
    ]);
    await client.query('COMMIT');
    client.release();
  } catch (error) {
    client.release(true); // closed, which rolls back: whatever state it is in is not reused
    throw error;
  }
}

port.on('message', (request: WriterRequest) => {
  if (request === 'close') {
    writing = writing
      .then(() => pool.end())
      .catch(() => undefined) // the thread ends either way; its connection with it
      .finally(() => port.close());
    return;
  }
  writing = writing.then(() =>
    write(request.page).then(
      () => port.postMessage({ id: request.id } satisfies WriterReply),
      (error: unknown) => port.postMessage({ id: request.id, error: toWire(error) } satisfies WriterReply),
    ),
  );
});
