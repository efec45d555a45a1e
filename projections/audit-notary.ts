// The audit notary: a reactor (one active among the projections processes, under a session lock
// like the pass event forwarder) that makes every event of the log, in global order, a leaf of an
// RFC 9162 Merkle tree kept in PostgreSQL (shared/audit/postgres-audit-tree.ts), and signs tree
// heads with the audit key: at most every 10 s while events arrive, at least hourly. Each head is
// kept in audit_tree_heads and appended to the log (AuditTreeHeadSigned), where it becomes a leaf
// itself. A batch's leaves, nodes, tenant rows and the tree's reach are one transaction, so a
// crash (SIGKILL) leaves no leaf twice and no gap; a restart goes on from the stored reach.
// Batches are read and hashed while the one before commits (audit-leaf-pipeline.ts).
//
// Leaves hash the events exactly as stored (storedEvents: not upcast), through the EventStore
// port, so it works the same over PostgreSQL and EventStoreDB.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import { positionToString, WrongExpectedVersion, type EventStore } from '../shared/event-store/event-store.js';
import { storedEvents } from '../shared/event-store/validating-event-store.js';
import { toHex } from '../shared/audit/merkle-hash.js';
import {
  insertHead,
  latestHead,
  loadCompactRange,
  markHeadLogged,
  orgLinks,
  readTreeState,
  unloggedHeads,
  writeTreeBatch,
} from '../shared/audit/postgres-audit-tree.js';
import { currentAuditKey } from '../shared/audit/audit-keys.js';
import { signTreeHead, type SignedTreeHead } from '../shared/audit/tree-head.js';
import { AUDIT_TREE_HEADS_STREAM, type AuditTreeHeadSigned } from '../shared/domain/audit-events.js';
import { checkCheckpointStore } from './checkpoint-store-identity.js';
import { StoppableRetry } from './stoppable-retry.js';
import { AuditIntegrity, checkSample } from './audit-sample-check.js';
import { LeafPipeline, type TreeReach } from './audit-leaf-pipeline.js';

export const AUDIT_NOTARY = 'audit-notary';

export interface AuditNotaryOptions {
  /** The configured (validating) store: heads are appended through it; leaves are read from storedEvents(store). */
  readonly store: EventStore;
  readonly knex: Knex;
  /** The OAuth key-encryption key, which seals the audit key too. */
  readonly kek: Uint8Array;
  readonly logger?: Logger;
  readonly integrity?: AuditIntegrity;
  /** Shortest time between two heads while events arrive (default 10 s). */
  readonly headIntervalMs?: number;
  /** Longest time without a head (default 1 h). */
  readonly heartbeatMs?: number;
  /** Time between two sample checks (default 5 min; 0 turns them off). */
  readonly sampleEveryMs?: number;
  readonly sampleSize?: number;
  readonly batchSize?: number;
  readonly retry?: { readonly initialMs?: number; readonly maxMs?: number };
}

export class AuditNotary {
  private readonly raw: EventStore;
  private readonly retry: StoppableRetry;
  private readonly pipeline: LeafPipeline;
  /** Leaves other than head events since the last head: what makes a 10-second head due. */
  private unheaded = 0;
  private lastHead: { head: number; size: number; at: number } = { head: 0, size: 0, at: 0 };
  /** Heads and reloads of the tree take turns (leaves go on meanwhile: a head signs the committed tree). */
  private turn: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  readonly integrity: AuditIntegrity;

  constructor(private readonly options: AuditNotaryOptions) {
    this.raw = storedEvents(options.store);
    this.retry = new StoppableRetry('audit notary', options.logger, options.retry);
    this.integrity = options.integrity ?? new AuditIntegrity();
    const knex = options.knex;
    this.pipeline = new LeafPipeline({
      log: this.raw,
      store: {
        load: () => this.inTurn(() => this.load()),
        links: (keys) => orgLinks(knex, keys),
        write: (batch) => writeTreeBatch(knex, batch),
      },
      retry: this.retry,
      logger: options.logger,
      batchSize: options.batchSize ?? 1000,
      onCommitted: (prepared) => {
        this.unheaded += prepared.unheaded;
        void this.inTurn(() => this.headIfDue()).catch(() => undefined);
      },
    });
  }

  get treeSize(): number {
    return this.pipeline.committed?.range.size ?? 0;
  }

  async start(): Promise<void> {
    const { knex, logger } = this.options;
    const check = await this.retry.run('check the event store', () => checkCheckpointStore(knex, this.options.store));
    if (!check.ok) throw check.mismatch;
    await this.retry.run('log pending heads', () => this.logPendingHeads());
    if (this.retry.stopped) return;
    await this.pipeline.start();
    logger?.info({ reactor: AUDIT_NOTARY, treeSize: this.treeSize, from: positionToString(this.pipeline.committed!.position) }, 'audit notary started');
    const tick = setInterval(() => void this.inTurn(() => this.headIfDue()).catch(() => undefined), 1000);
    tick.unref();
    this.timers.push(tick);
    const every = this.options.sampleEveryMs ?? 5 * 60_000;
    if (every > 0) {
      const sampling = setInterval(() => void this.sample().catch((error: unknown) => logger?.warn({ err: error }, 'audit sample check failed; trying again later')), every);
      sampling.unref();
      this.timers.push(sampling);
    }
  }

  async stop(): Promise<void> {
    this.retry.stop();
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    await this.pipeline.stop();
    await this.turn.catch(() => undefined);
  }

  /** A sample check now (the timer's round; tests call it). */
  sample(size = this.options.sampleSize ?? 32) {
    return checkSample({ knex: this.options.knex, store: this.raw, logger: this.options.logger, integrity: this.integrity }, size);
  }

  /** Signs a head now if anything was committed since the last one (tests and shutdown use it). */
  signNow(): Promise<SignedTreeHead | null> {
    return this.inTurn(() => (this.treeSize > this.lastHead.size ? this.signHead() : Promise.resolve(null)));
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** The stored tree, and the heads (at start, and when a failure makes the pipeline start again). */
  private async load(): Promise<TreeReach> {
    const state = await readTreeState(this.options.knex);
    const range = await loadCompactRange(this.options.knex, state.treeSize);
    const head = await latestHead(this.options.knex);
    this.lastHead = head ? { head: head.head, size: head.tree_size, at: head.timestamp } : { head: 0, size: 0, at: 0 };
    // After a restart the kind of the leaves since the last head is not known: more than its own
    // head event means something arrived.
    this.unheaded = Math.max(0, state.treeSize - this.lastHead.size - 1);
    return { range, position: state.position };
  }

  private async headIfDue(): Promise<void> {
    const range = this.pipeline.committed?.range;
    if (!range || this.retry.stopped) return;
    const now = Date.now();
    const sinceLast = now - this.lastHead.at;
    const due =
      (this.unheaded > 0 && sinceLast >= (this.options.headIntervalMs ?? 10_000)) ||
      (sinceLast >= (this.options.heartbeatMs ?? 3_600_000) && range.size > 0);
    if (due) await this.retry.run('sign a head', () => this.signHead());
  }

  private async signHead(): Promise<SignedTreeHead> {
    const { knex, kek } = this.options;
    // The committed tree as it is now; leaves committed while the head is signed wait for the next.
    const range = this.pipeline.committed!.range;
    const counted = this.unheaded;
    const key = await currentAuditKey(knex, kek);
    const fields = { tree_size: range.size, root_hash: toHex(range.root()), timestamp: Math.max(Date.now(), this.lastHead.at + 1) };
    const head = { head: this.lastHead.head + 1, ...fields, signature: await signTreeHead(fields, key), kid: key.kid };
    await insertHead(knex, head);
    this.lastHead = { head: head.head, size: head.tree_size, at: head.timestamp };
    this.unheaded = Math.max(0, this.unheaded - counted);
    this.options.logger?.debug({ head: head.head, treeSize: head.tree_size }, 'audit tree head signed');
    await this.logPendingHeads();
    return head;
  }

  /** Appends every head not yet in the log, in order (a crash between the two is finished here). */
  private async logPendingHeads(): Promise<void> {
    for (const head of await unloggedHeads(this.options.knex)) {
      const event: AuditTreeHeadSigned = {
        type: 'AuditTreeHeadSigned',
        data: { head: head.head, treeSize: head.tree_size, rootHash: head.root_hash, timestamp: head.timestamp, kid: kidOf(head), signature: head.signature },
      };
      try {
        await this.options.store.appendToStream(
          AUDIT_TREE_HEADS_STREAM,
          [
            {
              id: randomUUID(),
              ...event,
              metadata: {
                correlationId: randomUUID(),
                causationId: null,
                actor: { kind: 'system', name: AUDIT_NOTARY },
                occurredAt: new Date(head.timestamp).toISOString(),
                schemaVersion: 1,
              },
            },
          ],
          head.head === 1 ? 'no_stream' : head.head - 2,
        );
      } catch (error) {
        // Appended before a crash, not yet marked: the stream already holds it.
        if (!(error instanceof WrongExpectedVersion) || error.actual === 'no_stream' || error.actual < head.head - 1) throw error;
      }
      await markHeadLogged(this.options.knex, head.head);
    }
  }
}

function kidOf(head: SignedTreeHead): string {
  const header = JSON.parse(Buffer.from(head.signature.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string };
  return header.kid;
}
