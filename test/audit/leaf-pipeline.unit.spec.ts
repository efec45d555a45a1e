// The notary's leaf pipeline (projections/audit-leaf-pipeline.ts) over an in-memory log and an
// in-memory tree store that keeps the same rule as PostgreSQL's (a batch commits only on top of
// exactly the tree it was hashed against): it reads the next batch while a write is in flight,
// never has two writes in flight, and after a write that fails (before or after its commit) goes
// on from the stored tree, so the tree is the log's events, each once, in the log's order.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { comparePositions, START, type Position, type RecordedEvent, type SubscribeOptions, type Subscription } from '../../shared/event-store/event-store.js';
import { canonicalEvent, eventLeafHash } from '../../shared/audit/audit-leaf.js';
import { CompactRange } from '../../shared/audit/compact-range.js';
import { TreeMoved, type TreeBatch } from '../../shared/audit/postgres-audit-tree.js';
import { LeafPipeline, type LeafStorePort, type TreeReach } from '../../projections/audit-leaf-pipeline.js';
import { StoppableRetry } from '../../projections/stoppable-retry.js';

const tick = (ms = 0) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function event(i: number, stream: string, data: Record<string, unknown>): RecordedEvent {
  return {
    id: randomUUID(),
    type: 'OrganizationUpdated',
    data,
    metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, occurredAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
    streamName: stream,
    revision: 0,
    position: { commit: BigInt(100 + i), prepare: BigInt(i + 1) },
    recordedAt: new Date(1_767_225_600_000 + i),
  };
}

/** A catch-up subscription like the PostgreSQL store's: a batch, await the handler, the next; a throwing handler ends it. */
class MemoryLog {
  reads = 0;
  constructor(readonly events: RecordedEvent[]) {}

  subscribeToAll(options: SubscribeOptions): Subscription {
    let stopped = false;
    const done = (async () => {
      let after = options.after;
      while (!stopped) {
        const batch = this.events.filter((e) => comparePositions(e.position, after) > 0).slice(0, options.batchSize ?? 10);
        if (batch.length === 0) {
          await tick(1);
          continue;
        }
        this.reads++;
        await tick(); // the read's round trip
        if (stopped) break;
        try {
          await options.onEvents(batch);
        } catch (error) {
          options.onError?.(error);
          break;
        }
        after = batch.at(-1)!.position;
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await done;
      },
    };
  }
}

/** The tree as PostgreSQL keeps it: leaves, links, the reach; a batch not on top of the stored size is refused. */
class MemoryTree {
  leaves: Array<{ index: number; eventId: string; orgId: number | null }> = [];
  links = new Map<string, number>();
  range = new CompactRange();
  position: Position = START;
  writes = 0;
  loads = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** Reads of the log that began while a write was in flight. */
  readsDuringWrites = 0;
  /** Write number → how it fails: before committing, or after (the acknowledgement lost). */
  failures = new Map<number, 'before' | 'after'>();

  constructor(private readonly log: MemoryLog) {}

  async load(): Promise<TreeReach> {
    this.loads++;
    await tick();
    return { range: new CompactRange(this.range.size, this.range.nodes()), position: this.position };
  }

  async linksOf(keys: readonly string[]): Promise<ReadonlyMap<string, number>> {
    await tick();
    return new Map(keys.flatMap((k) => (this.links.has(k) ? [[k, this.links.get(k)!] as const] : [])));
  }

  async write(batch: TreeBatch): Promise<void> {
    const n = ++this.writes;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const readsBefore = this.log.reads;
    try {
      await tick(2);
      this.readsDuringWrites += this.log.reads - readsBefore;
      const failure = this.failures.get(n);
      if (failure === 'before') throw new Error(`write ${n}: connection terminated`);
      if (batch.fromSize !== this.leaves.length) throw new TreeMoved(`the tree has ${this.leaves.length} leaves, not ${batch.fromSize}`);
      for (const leaf of batch.leaves) this.leaves.push({ index: leaf.index, eventId: leaf.eventId, orgId: leaf.orgId });
      for (const [key, org] of batch.links) if (!this.links.has(key)) this.links.set(key, org);
      const leafNodes = batch.nodes.filter((node) => node.level === 0);
      for (const node of leafNodes) this.range.append(node.hash);
      this.position = batch.position;
      if (failure === 'after') throw new Error(`write ${n}: connection terminated after COMMIT`);
    } finally {
      this.inFlight--;
    }
  }
}

function port(tree: MemoryTree): LeafStorePort {
  return { load: () => tree.load(), links: (keys) => tree.linksOf(keys), write: (batch) => tree.write(batch) };
}

async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(2);
  }
}

/** 120 events; stream `s-k` is named by its first event's orgId only, so the rest are attributed by link. */
function logOf(count = 120): MemoryLog {
  return new MemoryLog(Array.from({ length: count }, (_, i) => (i % 4 === 0 ? event(i, `s-${i >> 2}`, { orgId: 1 + (i >> 2) }) : event(i, `s-${i >> 2}`, { n: i }))));
}

async function run(log: MemoryLog, tree: MemoryTree): Promise<void> {
  const retry = new StoppableRetry('audit notary (test)', undefined, { initialMs: 1, maxMs: 5 });
  const pipeline = new LeafPipeline({ log, store: port(tree), retry, batchSize: 6 });
  await pipeline.start();
  try {
    await until(`all ${log.events.length} leaves`, () => tree.leaves.length >= log.events.length && tree.inFlight === 0);
    await tick(10); // nothing more may come
    expect(pipeline.committed!.range.size).to.equal(log.events.length);
  } finally {
    retry.stop();
    await pipeline.stop();
  }
}

function expectTheLog(log: MemoryLog, tree: MemoryTree): void {
  expect(tree.leaves.map((l) => l.index)).to.deep.equal(log.events.map((_, i) => i));
  expect(tree.leaves.map((l) => l.eventId)).to.deep.equal(log.events.map((e) => e.id));
  // Every event attributed, through the link its stream's first event made (often while that write was in flight).
  expect(tree.leaves.map((l) => l.orgId)).to.deep.equal(log.events.map((_, i) => 1 + (i >> 2)));
  const expected = new CompactRange();
  for (const e of log.events) expected.append(eventLeafHash(canonicalEvent(e)));
  expect(tree.range.root().equals(expected.root())).to.equal(true);
}

describe('audit notary leaf pipeline (in-memory log and tree)', function () {
  this.timeout(20_000);

  it('reads and hashes the next batch while the write before commits, with one write in flight at most', async () => {
    const log = logOf();
    const tree = new MemoryTree(log);
    await run(log, tree);
    expectTheLog(log, tree);
    expect(tree.maxInFlight).to.equal(1);
    expect(tree.readsDuringWrites).to.be.greaterThan(0);
  });

  for (const when of ['before', 'after'] as const) {
    it(`goes on from the stored tree after a write fails mid-pipeline ${when} its commit: each event once, in order`, async () => {
      const log = logOf();
      const tree = new MemoryTree(log);
      tree.failures.set(3, when);
      tree.failures.set(4, when); // the first write after the restart fails too
      tree.failures.set(9, when);
      await run(log, tree);
      expectTheLog(log, tree);
      expect(tree.maxInFlight).to.equal(1);
      // 20 batches of 6; a batch whose write failed before its commit is written again.
      expect(tree.writes).to.equal(when === 'before' ? 23 : 20);
      expect(tree.loads, 'the start and a reload per failure').to.equal(4);
    });
  }
});
