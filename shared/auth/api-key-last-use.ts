// When each organization API key was last used, for the console's key list.
//
// Operational data, not a domain event: a use changes nothing about the key, and an event per use
// would swell the log with what nobody needs to replay. So it bypasses the log and is an UPDATE of
// its own small table (api_key_last_use, migration 017), which a rebuild of api_keys leaves alone.
//
// No write per request: each process writes a key's time at most once per minute (LastUseThrottle),
// so the list is at most about a minute behind. The write is started and not awaited, and its
// failure is logged and swallowed: recording a use never delays or fails the request that made it.
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';

export const LAST_USE_TABLE = 'api_key_last_use';
/** At most one write per key per this many milliseconds per process. */
export const LAST_USE_WRITE_INTERVAL_MS = 60_000;
/** Keys remembered at most; the least recently written go first (a forgotten key writes once more). */
const MAX_REMEMBERED_KEYS = 10_000;

/** Pure: decides, per key, whether a use at `nowMs` is due to be written. */
export class LastUseThrottle {
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly intervalMs: number = LAST_USE_WRITE_INTERVAL_MS,
    private readonly maxKeys: number = MAX_REMEMBERED_KEYS,
  ) {}

  /** True (and remembered as written) when the key was not written in the last interval. */
  shouldWrite(keyId: string, nowMs: number): boolean {
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && nowMs - last < this.intervalMs && nowMs >= last) return false;
    // Re-inserted so the Map's order is least recently written first.
    this.lastWritten.delete(keyId);
    if (this.lastWritten.size >= this.maxKeys) this.lastWritten.delete(this.lastWritten.keys().next().value!);
    this.lastWritten.set(keyId, nowMs);
    return true;
  }

  get size(): number {
    return this.lastWritten.size;
  }
}

export interface LastUseRecorder {
  /** Notes a use of `keyId` at `at`; returns at once (the write, if due, runs in the background). */
  record(keyId: string, at: Date, log: Logger): void;
}

function recorderFor(db: Knex, throttle: LastUseThrottle): LastUseRecorder {
  return {
    record(keyId, at, log) {
      if (!throttle.shouldWrite(keyId, at.getTime())) return;
      // greatest(): two processes writing out of order never move the time back.
      db.raw(
        `INSERT INTO ?? (key_id, last_used_at) VALUES (?, ?)
         ON CONFLICT (key_id) DO UPDATE SET last_used_at = greatest(??.last_used_at, excluded.last_used_at)`,
        [LAST_USE_TABLE, keyId, at, LAST_USE_TABLE],
      ).then(
        () => undefined,
        (error: unknown) => log.warn({ keyId, err: error instanceof Error ? error.message : String(error) }, 'api key last use not recorded'),
      );
    },
  };
}

// One throttle per database per process: the command and query services of one process (npm start)
// share it, so together they still write a key at most once a minute.
const recorders = new WeakMap<Knex, LastUseRecorder>();

/** The process's recorder for this database. */
export function lastUseRecorder(db: Knex): LastUseRecorder {
  let recorder = recorders.get(db);
  if (!recorder) {
    recorder = recorderFor(db, new LastUseThrottle());
    recorders.set(db, recorder);
  }
  return recorder;
}
