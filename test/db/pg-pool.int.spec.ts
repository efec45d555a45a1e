// The service's pg pools outlive a connection the server ends (a restart, an administrator).
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { createPgPool } from '../../shared/db/pg-pool.js';
import { migratedDatabaseUrl } from '../support/database.js';

describe('createPgPool', function () {
  this.timeout(30_000);

  it('does not crash the process when the server ends an idle connection, and connects anew for the next query', async () => {
    const pool = createPgPool(await migratedDatabaseUrl('pg_pool'), 2);
    try {
      const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = rows[0]!.pid;
      const admin = createPgPool(await migratedDatabaseUrl('pg_pool_admin'), 1);
      try {
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      } finally {
        await admin.end();
      }
      // The pool drops the client on its error event, which without the pool's own listener is
      // thrown: an uncaught exception, failing this test.
      for (let i = 0; i < 100 && pool.totalCount > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(pool.totalCount).to.equal(0);
      const again = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(again.rows[0]!.pid).not.to.equal(pid);
    } finally {
      await pool.end();
    }
  });

  it('does not crash the process when a connection breaks while checked out: the query under way fails, the pool goes on', async () => {
    const pool = createPgPool(await migratedDatabaseUrl('pg_pool_out'), 1);
    try {
      const client = await pool.connect();
      const sleeping = client.query('SELECT pg_sleep(10)');
      // A reset with no error message from the server first (a network failure): the client's
      // error event, which pg-pool does not listen to while the client is checked out.
      (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy(new Error('connection reset'));
      const failed = await sleeping.then(
        () => expect.fail('the connection broke'),
        (e: unknown) => e,
      );
      expect(String(failed)).to.include('connection reset');
      client.release(true);
      const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
      expect(rows[0]!.one).to.equal(1);
    } finally {
      await pool.end();
    }
  });
});
