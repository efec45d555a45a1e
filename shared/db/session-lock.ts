// PostgreSQL session advisory locks, each held on a connection of its own (outside the pool, which
// may have only one connection): PostgreSQL releases one when its holder's process dies, and
// ending the connection releases it.
import type { Knex } from 'knex';
import type pg from 'pg';

/** The service's session locks: fixed, distinct bigints. */
export const SESSION_LOCKS = {
  /** Serializes the migrators of one database (shared/db/migrate.ts). */
  migrations: 7_302_517_446_001,
  /** One active door-gateway per deployment (door-gateway/gateway-role.ts). */
  doorGateway: 7_302_517_446_002,
  /** One active pass event forwarder among the projections processes (projections/main.ts). */
  passEventForwarder: 7_302_517_446_003,
  /** One active audit notary among the projections processes (projections/audit-notary-role.ts). */
  auditNotary: 7_302_517_446_004,
} as const;

/**
 * Waits for the lock, then resolves with its release. `onLost` is told once if the connection
 * holding it fails or ends before the release (the lock is gone then).
 */
export async function holdSessionLock(knex: Knex, key: number, onLost: (error: Error) => void = () => undefined): Promise<() => Promise<void>> {
  const client = (await knex.client.acquireRawConnection()) as pg.Client;
  let released = false;
  const lost = (error: Error) => {
    if (!released) onLost(error);
    released = true;
  };
  client.on('error', lost);
  client.on('end', () => lost(new Error('the connection holding a session lock ended')));
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
  } catch (error) {
    released = true;
    await client.end().catch(() => undefined);
    throw error;
  }
  return async () => {
    released = true;
    await client.end().catch(() => undefined); // ending the session releases the lock
  };
}
