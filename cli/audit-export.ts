// `guestpass audit export`: the operator's audit export (shared/audit/export-format.ts) as lines,
// from two sources merged by global position: the notary's leaf records (audit_leaves and their
// hashes) and the event log itself, read through the port exactly as stored. Where they disagree
// both are written as they are; judging is the verifier's work. Pages of 1,000 from each: flat memory.
import type { Knex } from 'knex';
import { NotFoundError } from '../shared/errors.js';
import { comparePositions, parsePosition, START, type EventStore, type Position, type RecordedEvent } from '../shared/event-store/event-store.js';
import { storedEvents } from '../shared/event-store/validating-event-store.js';
import { canonicalEvent } from '../shared/audit/audit-leaf.js';
import { toHex } from '../shared/audit/merkle-hash.js';
import { frontierNodes } from '../shared/audit/compact-range.js';
import { nodeKey } from '../shared/audit/merkle-ranges.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportLine } from '../shared/audit/export-format.js';
import type { LeafRecordJson } from '../shared/audit/entry-line.js';
import { headByNumber, headsBetween, latestHead, leafRecords, PostgresNodeStore } from '../shared/audit/postgres-audit-tree.js';
import type { SignedTreeHead } from '../shared/audit/tree-head.js';

const PAGE = 1000;

/** A head asked for that does not exist (or none yet). */
export class ExportRangeError extends NotFoundError {}

/** The lines of an export from head `fromHead` (default: the start of the log) to head `toHead` (default: the latest). */
export async function* auditExportLines(deps: { readonly knex: Knex; readonly store: EventStore }, options: { fromHead?: number; toHead?: number } = {}): AsyncGenerator<ExportLine> {
  const { knex } = deps;
  const store = storedEvents(deps.store);
  const last = options.toHead !== undefined ? await headByNumber(knex, options.toHead) : await latestHead(knex);
  if (!last) throw new ExportRangeError(options.toHead !== undefined ? `there is no head ${options.toHead}` : 'no tree head has been signed yet: start the service (its audit notary) first');
  const first = options.fromHead !== undefined ? await headByNumber(knex, options.fromHead) : null;
  if (options.fromHead !== undefined && !first) throw new ExportRangeError(`there is no head ${options.fromHead}`);
  if (first && first.head > last.head) throw new ExportRangeError(`--from-head ${first.head} is after --to-head ${last.head}`);
  const fromSize = first?.tree_size ?? 0;
  const toSize = last.tree_size;
  yield { kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, from_size: fromSize, to_size: toSize, exported_at: new Date().toISOString() };
  if (fromSize > 0) {
    const wanted = frontierNodes(fromSize);
    const found = await new PostgresNodeStore(knex).nodes(wanted);
    yield { kind: 'frontier', tree_size: fromSize, nodes: wanted.map((n) => ({ level: n.level, index: n.index, hash: toHex(found.get(nodeKey(n)) ?? Buffer.alloc(32)) })) };
  }
  // Heads in order, each placed after the entry that completes its size.
  const headQueue: SignedTreeHead[] = [];
  let nextHeadNumber = first?.head ?? 1;
  const refillHeads = async () => {
    if (headQueue.length > 0 || nextHeadNumber > last.head) return;
    const heads = await headsBetween(knex, nextHeadNumber, last.head, PAGE);
    headQueue.push(...heads);
    nextHeadNumber = (heads.at(-1)?.head ?? last.head) + 1;
  };
  async function* headsUpTo(size: number): AsyncGenerator<ExportLine> {
    for (;;) {
      await refillHeads();
      const head = headQueue[0];
      if (!head || head.tree_size > size) return;
      headQueue.shift();
      yield { kind: 'head', ...head };
    }
  }
  yield* headsUpTo(fromSize);

  // The two sources, paged, merged by position.
  let leaves: LeafRecordJson[] = [];
  let nextLeaf = fromSize;
  const moreLeaves = async () => {
    if (leaves.length > 0 || nextLeaf >= toSize) return;
    const page = await leafRecords(knex, nextLeaf, PAGE, toSize);
    leaves = page.map((r) => ({ index: r.index, event_id: r.eventId, position: r.position, leaf_hash: toHex(r.hash) }));
    nextLeaf = page.length === 0 ? toSize : page.at(-1)!.index + 1;
  };
  const lastLeafPosition = parsePosition((await leafRecords(knex, toSize - 1, 1, toSize))[0]?.position ?? '0/0');
  let events: RecordedEvent[] = [];
  let after: Position = fromSize === 0 ? START : parsePosition((await leafRecords(knex, fromSize - 1, 1, fromSize))[0]?.position ?? '0/0');
  let logDone = false;
  const moreEvents = async () => {
    if (events.length > 0 || logDone) return;
    const page = await store.readAll({ after, maxCount: PAGE });
    events = page.filter((e) => comparePositions(e.position, lastLeafPosition) <= 0);
    if (page.length < PAGE || events.length < page.length) logDone = true;
    if (page.length > 0) after = page.at(-1)!.position;
  };
  let entries = 0;
  let leafCount = fromSize;
  for (;;) {
    await moreLeaves();
    await moreEvents();
    const leaf = leaves[0];
    const event = events[0];
    if (!leaf && !event) break;
    const order = !leaf ? 1 : !event ? -1 : comparePositions(parsePosition(leaf.position), event.position);
    const line: ExportLine = { kind: 'entry', leaf: order <= 0 ? leaf! : null, event: order >= 0 ? canonicalEvent(event!) : null };
    if (order <= 0) leaves.shift();
    if (order >= 0) events.shift();
    entries++;
    yield line;
    if (line.leaf) {
      leafCount = line.leaf.index + 1;
      yield* headsUpTo(leafCount);
    }
  }
  yield* headsUpTo(Number.MAX_SAFE_INTEGER);
  yield { kind: 'end', entries };
}
