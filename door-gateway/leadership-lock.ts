// The lock that makes one door-gateway the deployment's active one: a PostgreSQL session advisory
// lock on a connection of its own, which the server releases when the holder's process dies.
//
// A standby asks for it with pg_try_advisory_lock every `pollMs` rather than waiting in
// pg_advisory_lock: a statement that waits keeps its snapshot for as long as it waits, here as
// long as the active gateway lives, and meanwhile every CREATE INDEX CONCURRENTLY of the database
// (a projection rebuild's indexes) waits for it, and VACUUM keeps every row that died since.
import type { Knex } from 'knex';
import type pg from 'pg';

export interface LeadershipLockOptions {
  /** How often a standby asks (default 1000 ms): the takeover's delay after the holder died. */
  readonly pollMs?: number;
  /** Gives up waiting (rejects with an AbortError) once aborted. */
  readonly signal?: AbortSignal;
}

/**
 * Resolves once this process holds the lock, with its release. `onLost` is told once if the
 * connection holding it fails or ends before the release (the lock is gone then).
 */
export async function holdLeadershipLock(
  knex: Knex,
  key: number,
  onLost: (error: Error) => void,
  options: LeadershipLockOptions = {},
): Promise<() => Promise<void>> {
  const client = (await knex.client.acquireRawConnection()) as pg.Client;
  let holding = false;
  let ended = false;
  const lost = (error: Error) => {
    if (holding) onLost(error);
    holding = false;
  };
  client.on('error', lost);
  client.on('end', () => {
    ended = true;
    lost(new Error('the connection holding the active door-gateway lock ended'));
  });
  const release = async () => {
    holding = false;
    await client.end().catch(() => undefined); // ending the session releases the lock
  };
  try {
    await client.query("SET application_name = 'guestpass door-gateway lock'");
    for (;;) {
      options.signal?.throwIfAborted();
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]);
      if (rows[0]?.locked) break;
      await pause(options.pollMs ?? 1000, options.signal);
    }
    if (ended) throw new Error('the connection for the active door-gateway lock ended');
  } catch (error) {
    await release();
    throw error;
  }
  holding = true;
  return release;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
