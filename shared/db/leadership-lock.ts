// The lock that makes one process of several the deployment's active one for a role (the
// door-gateway; the pass event forwarder of the projections processes): a PostgreSQL session
// advisory lock on a connection of its own, which the server releases when the holder's process dies.
//
// A standby asks for it with pg_try_advisory_lock every `pollMs` rather than waiting in
// pg_advisory_lock: a statement that waits keeps its snapshot for as long as it waits, here as
// long as the active holder lives, and meanwhile every CREATE INDEX CONCURRENTLY of the database
// (a projection rebuild's indexes) waits for it, and VACUUM keeps every row that died since.
//
// A holder cut off from the server without dying (its host or the network gone) must step down
// before the server lets a standby in, or two would act at once (two gateways driving the doors).
// So the holder asks the server every `heartbeatMs` and steps down once an answer is
// `heartbeatTimeoutMs` late (5 s by default), while the server ends the silent session, and so
// releases the lock, only after about 19 s: TCP keepalives 10 s idle, then 3 probes 3 s apart, and
// tcp_user_timeout 20 s for data left unacknowledged. Left to the operating system, the server
// would wait two hours.
import { setTimeout as pause } from 'node:timers/promises';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { untilAborted } from '../until-aborted.js';

export interface LeadershipLockOptions {
  /** The role, as the lock's session and messages name it: `guestpass {holder} lock`. */
  readonly holder: string;
  /** How often a standby asks (default 1000 ms): the takeover's delay after the holder died. */
  readonly pollMs?: number;
  /** Gives up waiting (rejects with an AbortError) once aborted. */
  readonly signal?: AbortSignal;
  /** How often the holder asks the server (default 2000 ms). */
  readonly heartbeatMs?: number;
  /** An answer this late makes the holder step down (default 5000 ms; keep it well below the server's 19 s). */
  readonly heartbeatTimeoutMs?: number;
}

/** The lock session's name and the server's side of the order above: it gives up on a silent holder after about 19 s. */
const lockSessionSettings = (holder: string) =>
  [
    `SET application_name = ${pg.escapeLiteral(`guestpass ${holder} lock`)}`,
    'SET tcp_keepalives_idle = 10',
    'SET tcp_keepalives_interval = 3',
    'SET tcp_keepalives_count = 3',
    'SET tcp_user_timeout = 20000',
  ].join('; ');

/**
 * Resolves once this process holds the lock, with its release. `onLost` is told once if the
 * connection holding it fails or ends before the release (the lock is gone then).
 */
export async function holdLeadershipLock(
  knex: Knex,
  key: number,
  onLost: (error: Error) => void,
  options: LeadershipLockOptions,
): Promise<() => Promise<void>> {
  // A server that has fallen silent answers neither the connection nor a query: stop() must not wait on it.
  const client = await untilAborted(knex.client.acquireRawConnection() as Promise<pg.Client>, options.signal, (late) => void endConnection(late));
  let holding = false;
  let ended = false;
  const lost = (error: Error) => {
    if (holding) onLost(error);
    holding = false;
  };
  client.on('error', lost);
  client.on('end', () => {
    ended = true;
    lost(new Error(`the connection holding the active ${options.holder} lock ended`));
  });
  let heartbeat: NodeJS.Timeout | undefined;
  const release = async () => {
    holding = false;
    clearInterval(heartbeat);
    await endConnection(client); // ending the session releases the lock
  };
  try {
    await untilAborted(client.query(lockSessionSettings(options.holder)), options.signal);
    for (;;) {
      options.signal?.throwIfAborted();
      const { rows } = await untilAborted(client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [key]), options.signal);
      if (rows[0]?.locked) break;
      await pause(options.pollMs ?? 1000, undefined, { signal: options.signal });
    }
    if (ended) throw new Error(`the connection for the active ${options.holder} lock ended`);
  } catch (error) {
    await release();
    throw error;
  }
  holding = true;
  heartbeat = keepAsking(client, options, (error) => {
    lost(error);
    void release();
  });
  return release;
}

/** The holder's heartbeat: `onSilent` once the server fails to answer in time (or at all). */
function keepAsking(client: pg.Client, options: LeadershipLockOptions, onSilent: (error: Error) => void): NodeJS.Timeout {
  const timeoutMs = options.heartbeatTimeoutMs ?? 5000;
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;
    asking = true;
    let late: NodeJS.Timeout | undefined;
    const answered = client.query('SELECT 1');
    const overdue = new Promise<never>((_, reject) => {
      late = setTimeout(() => reject(new Error('no answer')), timeoutMs);
    });
    Promise.race([answered, overdue]).then(
      () => {
        clearTimeout(late);
        asking = false;
      },
      (error: Error) => {
        clearTimeout(late);
        clearInterval(timer);
        answered.catch(() => undefined); // its end comes with the connection's
        onSilent(new Error(`the server holding the active ${options.holder} lock did not answer within ${timeoutMs} ms: ${error.message}`));
      },
    );
  }, options.heartbeatMs ?? 2000);
  timer.unref();
  return timer;
}

/** How long a goodbye may take before the socket is dropped: a silent server never answers it. */
const GOODBYE_MS = 1000;

async function endConnection(client: pg.Client): Promise<void> {
  let late: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    client.end().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (late = setTimeout(() => resolve(false), GOODBYE_MS))),
  ]);
  clearTimeout(late);
  // pg has no public way to drop a connection whose peer is gone; its socket is `connection.stream`.
  if (!ended) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

export interface LeaderRole {
  /** True while this process holds the lock and its work runs. */
  readonly active: boolean;
  /** Stops the work (if running), lets go of the lock, and stops asking for it. */
  stop(): Promise<void>;
}

export interface WhileLeaderOptions extends Omit<LeadershipLockOptions, 'signal'> {
  readonly knex: Knex;
  readonly key: number;
  readonly logger?: Logger;
  /**
   * The longest pause between two attempts that could not reach the server (default 5000 ms):
   * from `pollMs` it doubles up to this, so a database that is down is not asked every second,
   * and the role is back within this long of the database.
   */
  readonly maxRetryMs?: number;
  /** Starts the work once the lock is held and resolves at once (work that waits for something runs on) with what stops it. */
  readonly start: () => Promise<() => Promise<void>>;
}

/**
 * Runs `start`'s work only while this process holds the lock, as a standby otherwise: when the lock
 * is lost (the database stopped, the session ended, the server fell silent) the work is stopped
 * and the process asks for the lock again, and starts the work again once it holds it. Never
 * rejects, and never ends the process: failures to reach the database are logged once per
 * outage and tried again with backoff.
 */
export function runWhileLeader(options: WhileLeaderOptions): LeaderRole {
  const { knex, key, logger, start, maxRetryMs = 5000, ...lockOptions } = options;
  const pollMs = lockOptions.pollMs ?? 1000;
  const abort = new AbortController();
  const stopped = new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
  let active = false;
  const loop = (async () => {
    let failures = 0;
    let waiting = false;
    while (!abort.signal.aborted) {
      // Said once each time it begins to wait: at first, and after losing the role.
      if (!waiting) logger?.info(`waiting to be the active ${options.holder} (a standby while another one runs)`);
      waiting = true;
      let onLost!: (error: Error) => void;
      const lost = new Promise<Error>((resolve) => (onLost = resolve));
      let release: () => Promise<void>;
      try {
        release = await holdLeadershipLock(knex, key, (error) => onLost(error), { ...lockOptions, signal: abort.signal });
      } catch (error) {
        if (abort.signal.aborted) break;
        const retryMs = Math.min(maxRetryMs, pollMs * 2 ** Math.min(failures, 16));
        if (failures === 0) logger?.warn({ err: error }, `cannot ask for the ${options.holder} lock; asking again (backing off up to ${maxRetryMs} ms)`);
        else logger?.debug({ err: error, retryMs }, `still cannot ask for the ${options.holder} lock`);
        failures++;
        await pause(retryMs, undefined, { signal: abort.signal }).catch(() => undefined);
        continue;
      }
      failures = 0;
      waiting = false;
      let stopWork: (() => Promise<void>) | null = null;
      let failed = false;
      try {
        stopWork = await start();
        active = true;
        logger?.info(`active ${options.holder}: holds its lock`);
        const reason = await Promise.race([lost, stopped.then(() => null)]);
        if (reason) logger?.warn({ err: reason }, `lost the ${options.holder} lock; stopping, then asking again`);
      } catch (error) {
        logger?.error({ err: error }, `the ${options.holder} failed to start; asking for its lock again`);
        failed = true;
      } finally {
        active = false;
        await stopWork?.().catch((error: unknown) => logger?.warn({ err: error }, `stopping the ${options.holder} failed`));
        await release();
      }
      // Another process may start it where this one could not; this one waits its turn.
      if (failed) await pause(pollMs, undefined, { signal: abort.signal }).catch(() => undefined);
    }
  })();
  return {
    get active() {
      return active;
    },
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
