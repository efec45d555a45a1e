// A pg pool for the service's own connections to PostgreSQL.
import pg from 'pg';

/**
 * A pool whose idle clients' errors do not crash the process: a server restarting or stopping,
 * or a connection ended by an administrator, is reported on an idle client as an 'error' event,
 * which without a listener is thrown. The pool drops that client; the next query connects anew.
 */
export function createPgPool(connectionString: string, max: number, options: { applicationName?: string } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: options.applicationName });
  pool.on('error', () => undefined);
  return pool;
}
