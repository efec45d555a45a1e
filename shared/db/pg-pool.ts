// A pg pool for the service's own connections to PostgreSQL.
import pg from 'pg';

/**
 * Startup option of every service connection: no JIT compilation. The service's statements are
 * short, and a bulk one (a read of 1,024 streams, planned on statistics the bulk write itself
 * made stale) was estimated costly enough to be compiled: 600 ms of JIT for a 57 ms statement.
 */
export const NO_JIT = '-c jit=off';

/**
 * A pool whose clients' errors do not crash the process. A connection that breaks (a server
 * restarting or stopping, an administrator ending it, a network failure) reports an 'error' event
 * on its client, which without a listener is thrown. pg-pool listens only while a client is idle,
 * and drops it; a checked-out client's query under way fails with the error, and its holder
 * releases it.
 */
export function createPgPool(connectionString: string, max: number, options: { applicationName?: string } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: options.applicationName, options: NO_JIT });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
