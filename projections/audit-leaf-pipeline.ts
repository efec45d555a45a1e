// The audit notary's leaves as a pipeline: the next batch of the log is read and hashed while the
// batch before it commits, with at most one write in flight, so the tree's order is the log's.
// The notary was wait-bound (read, then hash, then write, then read again); here the read and the
// hashing overlap the write's round trips and its commit.
//
// A failure (a write, or a read of the links) stops the pipeline: the subscription ends, the write
// in flight settles (it commits or not), the stored tree is read again, and reading resumes after
// the stored tree's last leaf. The store refuses a batch not written on top of exactly the tree it
// was hashed against (TreeMoved), so nothing is applied twice and nothing is skipped, whichever
// way the write in flight went. Pure of I/O: the log and the tree come in as ports.
import { comparePositions, type Position, type RecordedEvent, type SubscribeOptions, type Subscription } from '../shared/event-store/event-store.js';
import type { Logger } from '../shared/logger.js';
import { canonicalEvent, canonicalText } from '../shared/audit/audit-leaf.js';
import { leafHashOfText } from '../shared/audit/merkle-hash.js';
import { CompactRange, type StoredNode } from '../shared/audit/compact-range.js';
import { attributeEvent, linkKeysOf, withheldReason, type OrgLinks } from '../shared/audit/org-attribution.js';
import type { LeafRecord, OrgEventRow, TreeBatch } from '../shared/audit/postgres-audit-tree.js';
import { Stopped, type StoppableRetry } from './stoppable-retry.js';

/** The tree as committed: its right edge and the position of its last leaf's event. */
export interface TreeReach {
  readonly range: CompactRange;
  readonly position: Position;
}

/** Where the tree is kept (PostgreSQL in the service, memory in the unit tests). */
export interface LeafStorePort {
  /** The stored tree. */
  load(): Promise<TreeReach>;
  /** The organization links stored for these keys. */
  links(keys: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** Commits a batch whole or not at all; refuses one whose fromSize is not the stored size. */
  write(batch: TreeBatch): Promise<void>;
}

export interface LogPort {
  subscribeToAll(options: SubscribeOptions): Subscription;
}

/** A batch hashed against a basis, ready to write. */
export interface PreparedBatch {
  readonly batch: TreeBatch;
  /** The tree once the batch is committed. */
  readonly reach: TreeReach;
  /** Leaves other than head events (what makes a head due). */
  readonly unheaded: number;
  /** Links the batch writes: later batches must see them before it commits. */
  readonly links: ReadonlyMap<string, number>;
}

/** Hashes `events` (after `basis`, in order) into leaves, nodes, tenant rows and new links. */
export function prepareBatch(events: readonly RecordedEvent[], basis: TreeReach, known: OrgLinks): PreparedBatch {
  const links = new Map(known);
  const learned = new Map<string, number>();
  const nodes: StoredNode[] = [];
  const leaves: LeafRecord[] = [];
  const orgEvents: OrgEventRow[] = [];
  let unheaded = 0;
  // A copy: the basis stays what is committed (or in flight) until this batch commits.
  const next = new CompactRange(basis.range.size, basis.range.nodes());
  for (const event of events) {
    const canonical = canonicalEvent(event);
    const text = canonicalText(canonical);
    const index = next.size;
    for (const node of next.append(leafHashOfText(text))) nodes.push(node);
    const { orgId, newLinks } = attributeEvent(event, links);
    for (const [key, org] of newLinks) {
      links.set(key, org);
      learned.set(key, org);
    }
    leaves.push({ index, eventId: event.id, position: canonical.position, orgId });
    if (orgId !== null) {
      const withheld = withheldReason(event);
      orgEvents.push({ orgId, index, canonical: withheld ? null : text, withheld });
    }
    if (event.type !== 'AuditTreeHeadSigned') unheaded++;
  }
  const position = events[events.length - 1]!.position;
  return {
    batch: { fromSize: basis.range.size, toSize: next.size, position, nodes, leaves, orgEvents, links: [...learned] },
    reach: { range: next, position },
    unheaded,
    links: learned,
  };
}

export interface LeafPipelineOptions {
  readonly log: LogPort;
  readonly store: LeafStorePort;
  /** The notary's: its stop ends the pipeline's waits; its back-off spaces reloads. */
  readonly retry: StoppableRetry;
  readonly logger?: Logger;
  readonly batchSize?: number;
  /** Called once a batch is committed (not for a batch whose outcome a restart read from the store instead). */
  readonly onCommitted?: (prepared: PreparedBatch) => void;
}

/** Ends a subscription that a restart replaced; never reported. */
export class PipelineRestarting extends Error {
  override readonly name = 'PipelineRestarting';
}

interface InFlight {
  readonly prepared: PreparedBatch;
  /** True once committed, false if the write failed; never rejects. */
  readonly done: Promise<boolean>;
}

export class LeafPipeline {
  private reach: TreeReach | null = null;
  /** What the next batch is hashed on: the committed tree, or the one the write in flight makes. */
  private basis: TreeReach | null = null;
  private inFlight: InFlight | null = null;
  private subscription: Subscription | null = null;
  /** Bumped by each restart: handlers and writes of an earlier round change nothing. */
  private round = 0;
  private restarting: Promise<void> | null = null;
  private failures = 0;

  constructor(private readonly options: LeafPipelineOptions) {}

  /** The committed tree (null before start). */
  get committed(): TreeReach | null {
    return this.reach;
  }

  /** Reads the stored tree and starts reading the log after it. */
  async start(): Promise<void> {
    const reach = await this.options.retry.run('load the tree', () => this.options.store.load());
    this.reach = reach;
    this.basis = reach;
    this.subscribe();
  }

  /** Ends reading and waits for the write in flight to settle. Stop the retry first: a restart then ends at once. */
  async stop(): Promise<void> {
    this.round++;
    await this.restarting;
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
    await this.inFlight?.done;
  }

  private subscribe(): void {
    const round = this.round;
    this.subscription = this.options.log.subscribeToAll({
      after: this.basis!.position,
      batchSize: this.options.batchSize ?? 1000,
      onEvents: (events) => this.handle(round, events),
      onError: (error) => {
        if (error instanceof Stopped || error instanceof PipelineRestarting) return;
        // A read that failed (an event that cannot be read ends a subscription): start again from
        // the stored tree, backing off if it keeps failing.
        this.restart(round, error);
      },
    });
  }

  private async handle(round: number, events: readonly RecordedEvent[]): Promise<void> {
    if (round !== this.round) throw new PipelineRestarting('replaced by a restart');
    const basis = this.basis!;
    const fresh = events.filter((e) => comparePositions(e.position, basis.position) > 0);
    if (fresh.length === 0) return;
    // Links the write in flight makes are not in the store yet (the batch before it has committed:
    // it was awaited before that write began).
    const pending = this.inFlight?.prepared.links;
    let prepared: PreparedBatch;
    try {
      const stored = await this.options.store.links(fresh.flatMap(linkKeysOf));
      if (round !== this.round) throw new PipelineRestarting('replaced by a restart');
      const known = pending && pending.size > 0 ? new Map([...stored, ...pending]) : stored;
      prepared = prepareBatch(fresh, basis, known);
    } catch (error) {
      if (error instanceof PipelineRestarting) throw error;
      this.restart(round, error);
      throw new PipelineRestarting('reading the links failed');
    }
    // At most one write in flight: this one starts once the one before has committed.
    const before = this.inFlight;
    if (before && !(await before.done)) throw new PipelineRestarting('the write before failed');
    if (round !== this.round) throw new PipelineRestarting('replaced by a restart');
    this.basis = prepared.reach;
    const done = this.options.store.write(prepared.batch).then(
      () => {
        if (round === this.round) {
          this.reach = prepared.reach;
          this.failures = 0;
          this.options.onCommitted?.(prepared);
        }
        return true;
      },
      (error: unknown) => {
        this.restart(round, error);
        return false;
      },
    );
    const flight: InFlight = { prepared, done };
    this.inFlight = flight;
    void done.then(() => {
      if (this.inFlight === flight) this.inFlight = null;
    });
  }

  /** Stops this round and starts the next from the stored tree (once per round). */
  private restart(round: number, error: unknown): void {
    if (round !== this.round || this.options.retry.stopped) return;
    this.round++;
    const attempt = this.failures++;
    this.options.logger?.warn({ err: error, reactor: 'audit-notary', attempt: attempt + 1 }, 'audit notary: reading or appending leaves failed; going on from the stored tree');
    const previous = this.subscription;
    this.subscription = null;
    const flight = this.inFlight;
    const restarting: Promise<void> = (async () => {
      // Not awaited: the subscription's handler may be the caller. Its later calls are refused.
      void previous?.stop();
      await flight?.done;
      if (attempt > 0) await this.options.retry.pause(Math.min(5000, 100 * 2 ** attempt));
      const reach = await this.options.retry.run('reload the tree', () => this.options.store.load());
      if (this.options.retry.stopped) return;
      this.reach = reach;
      this.basis = reach;
      this.subscribe();
    })()
      .catch((failure: unknown) => {
        if (!(failure instanceof Stopped)) this.options.logger?.error({ err: failure }, 'audit notary: could not restart');
      })
      .finally(() => {
        if (this.restarting === restarting) this.restarting = null;
      });
    this.restarting = restarting;
  }
}
