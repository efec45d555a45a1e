// The offline verifier of an operator's audit export (export-format.ts), fed one parsed line at a
// time: memory stays flat whatever the export's length (a compact range of O(log n) hashes, the
// last head). It recomputes every leaf hash from the event, compares it with the notary's record,
// rebuilds the tree and checks every signed head's root, signature and order, and a trusted head
// saved earlier. The first failure is named by position and event id; after it the verifier only
// reads on to tell a reordering (the event turns up elsewhere) from a loss or an addition.
//
// An entry's event is hashed as the line carries it (its JCS bytes, lineBytes): the leaf hash binds
// every byte, so an event that hashes to its notarized leaf needs no parsing at all; only a failing
// one is parsed, to name its id and position. That keeps a line to a hash and a small JSON.parse of
// the leaf record.
import type { JWK } from 'jose';
import { canonicalText, type CanonicalEvent } from './audit-leaf.js';
import { CompactRange } from './compact-range.js';
import { fromHex, leafHash, toHex } from './merkle-hash.js';
import { frontierNodes } from './compact-range.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportLine } from './export-format.js';
import { parseLeafRecord, recordsLeaf, splitEntryBytes, type LeafRecordJson } from './entry-line.js';
import { treeHeadSignatureProblem, type SignedTreeHead } from './tree-head.js';

export type FailureKind = 'changed' | 'missing' | 'extra' | 'reordered' | 'bad head signature' | 'inconsistent head' | 'malformed export';

export interface VerificationFailure {
  readonly kind: FailureKind;
  /** Global position of the first failing place, when it is one. */
  readonly position: string | null;
  readonly eventId: string | null;
  readonly leafIndex: number | null;
  readonly detail: string;
}

export interface VerificationResult {
  readonly ok: boolean;
  readonly events: number;
  readonly firstHead: number | null;
  readonly lastHead: number | null;
  readonly failure: VerificationFailure | null;
}

/** Looking for the id a failure left open, to tell a reordering from a loss or an addition. */
interface OpenFailure {
  readonly failure: VerificationFailure;
  readonly lookFor: string;
  readonly among: 'events' | 'leaves';
  readonly ifFound: string;
}

export class ExportVerifier {
  private range: CompactRange | null = null;
  private header = false;
  private ended = false;
  private events = 0;
  private firstHead: number | null = null;
  private lastHead: SignedTreeHead | null = null;
  private failure: VerificationFailure | null = null;
  private open: OpenFailure | null = null;
  private trustedChecked = false;

  constructor(
    private readonly keys: readonly JWK[],
    private readonly trustedHead: SignedTreeHead | null = null,
  ) {}

  /**
   * Feeds one line of the file as bytes (without its newline; a view the caller may reuse once
   * this returns or, for a head, once its promise settles). An entry takes the fast way.
   */
  lineBytes(bytes: Buffer): void | Promise<void> {
    const entry = this.header && !this.ended ? splitEntryBytes(bytes) : null;
    if (!entry) {
      // Any other line, or an entry laid out otherwise: parsed whole (an entry's event is then
      // serialized again to hash it).
      let line: ExportLine;
      try {
        line = JSON.parse(bytes.toString('utf8')) as ExportLine;
      } catch {
        line = { kind: 'not json' } as unknown as ExportLine;
      }
      return this.line(line);
    }
    const range = this.range;
    // The way almost every line goes: its event hashes to the leaf the notary recorded, next in the tree.
    if (entry.eventBytes && range && !this.failure) {
      const hash = leafHash(entry.eventBytes);
      if (recordsLeaf(entry.leafText, range.size, toHex(hash))) {
        range.push(hash);
        this.events++;
        if (this.trustedHead && !this.trustedChecked) this.checkTrusted();
        return;
      }
    }
    let leaf: LeafRecordJson | null;
    try {
      leaf = parseLeafRecord(entry.leafText);
    } catch {
      return this.line({ kind: 'not json' } as unknown as ExportLine);
    }
    const event = entry.eventBytes ? new EntryEvent(entry.eventBytes) : null;
    if (this.failure) return this.lookAhead(leaf, event);
    return this.entry(leaf, event);
  }

  /** Feeds one parsed line; after a failure it only looks for what classifies it. */
  async line(line: ExportLine): Promise<void> {
    if (this.failure) return line.kind === 'entry' ? this.lookAhead(line.leaf, line.event ? EntryEvent.of(line.event) : null) : undefined;
    if (!this.header) {
      if (line.kind !== 'header' || line.format !== EXPORT_FORMAT || line.version !== EXPORT_VERSION) return this.fail('malformed export', 'not a guestpass audit export (version 1)');
      this.header = true;
      if (line.from_size === 0) this.range = new CompactRange();
      return;
    }
    if (this.ended) return this.fail('malformed export', 'lines after the end line');
    switch (line.kind) {
      case 'frontier':
        return this.frontier(line.tree_size, line.nodes);
      case 'entry':
        return this.entry(line.leaf, line.event ? EntryEvent.of(line.event) : null);
      case 'head':
        return this.head(line);
      case 'end':
        if (line.entries !== this.events) return this.fail('malformed export', `the end line counts ${line.entries} entries, the export holds ${this.events}`);
        this.ended = true;
        return;
      default:
        return this.fail('malformed export', `unknown line kind "${(line as { kind?: unknown }).kind}"`);
    }
  }

  async finish(): Promise<VerificationResult> {
    if (!this.failure) {
      if (!this.ended) this.fail('malformed export', 'the export ends early (no end line)');
      else if (this.lastHead === null) this.fail('malformed export', 'the export holds no signed head');
      else if (this.lastHead.tree_size !== this.range?.size) this.fail('malformed export', `leaves after the last head (${this.range?.size ?? 0} leaves, head at ${this.lastHead.tree_size})`);
      else if (this.trustedHead && !this.trustedChecked) {
        this.fail('inconsistent head', `the trusted head (tree size ${this.trustedHead.tree_size}) is outside this export's leaves; export from a head at or before it, up to one at or after it`);
      }
    }
    if (this.open) {
      // The displaced id never turned up: it is the loss or addition the failure first said.
      this.open = null;
    }
    return { ok: this.failure === null, events: this.events, firstHead: this.firstHead, lastHead: this.lastHead?.head ?? null, failure: this.failure };
  }

  private frontier(size: number, nodes: ReadonlyArray<{ level: number; index: number; hash: string }>): void {
    if (this.range) return this.fail('malformed export', 'a frontier line after the tree started');
    try {
      const expected = frontierNodes(size);
      if (expected.length !== nodes.length) throw new Error('wrong number of nodes');
      this.range = new CompactRange(
        size,
        nodes.map((n) => ({ level: n.level, index: n.index, hash: fromHex(n.hash) })),
      );
    } catch (error) {
      return this.fail('malformed export', `the frontier does not make up a tree of ${size} leaves: ${(error as Error).message}`);
    }
    this.checkTrusted();
  }

  private entry(leaf: LeafRecordJson | null, event: EntryEvent | null): void {
    const range = this.range;
    if (!range) return this.fail('malformed export', 'an entry before the tree started');
    if (leaf && event) {
      let computed: Buffer | null = null;
      try {
        computed = event.hash();
      } catch {
        // named below
      }
      // The way almost every line goes: its bytes hash to the leaf the notary recorded at this index.
      if (computed && leaf.index === range.size && leaf.leaf_hash === toHex(computed)) {
        range.append(computed);
        this.events++;
        return this.checkTrusted();
      }
      const parsed = event.parsed();
      const at = { position: parsed?.position ?? leaf.position, eventId: parsed?.id ?? leaf.event_id, leafIndex: leaf.index };
      if (leaf.index !== range.size) return this.fail('malformed export', `the notary's record of leaf ${range.size} is missing (the next is ${leaf.index})`, at);
      if (!computed || !parsed) return this.fail('changed', `the event at leaf ${leaf.index} cannot be hashed: it is not JSON`, at);
      try {
        fromHex(leaf.leaf_hash);
      } catch (error) {
        return this.fail('changed', `the notary's record of leaf ${leaf.index}: ${(error as Error).message}`, at);
      }
      if (parsed.id === leaf.event_id) return this.fail('changed', `event ${parsed.id} differs from the notarized one`, at);
      return this.failOpen('changed', `event ${parsed.id} is at the position of the notarized event ${leaf.event_id}`, at, {
        lookFor: leaf.event_id,
        among: 'events',
        ifFound: `event ${parsed.id} and the notarized event ${leaf.event_id} changed places`,
      });
    }
    if (leaf) {
      const at = { position: leaf.position, eventId: leaf.event_id, leafIndex: leaf.index };
      return this.failOpen('missing', `the notarized event ${leaf.event_id} is not in the log`, at, {
        lookFor: leaf.event_id,
        among: 'events',
        ifFound: `the notarized event ${leaf.event_id} was moved from its position`,
      });
    }
    if (event) {
      const parsed = event.parsed();
      const at = { position: parsed?.position ?? null, eventId: parsed?.id ?? null, leafIndex: range.size };
      if (!parsed) return this.fail('extra', `an entry at leaf ${range.size} holds an event that is not JSON, never notarized`, at);
      return this.failOpen('extra', `event ${parsed.id} is in the log but was never notarized`, at, {
        lookFor: parsed.id,
        among: 'leaves',
        ifFound: `event ${parsed.id} was moved before its notarized position`,
      });
    }
    return this.fail('malformed export', 'an entry with neither leaf nor event');
  }

  private async head(head: SignedTreeHead): Promise<void> {
    const range = this.range;
    if (!range) return this.fail('malformed export', 'a head before the tree started');
    const at = { leafIndex: head.tree_size > 0 ? head.tree_size - 1 : null };
    const problem = await treeHeadSignatureProblem(head, this.keys);
    if (problem) return this.fail('bad head signature', `head ${head.head} (tree size ${head.tree_size}): ${problem}`, at);
    const previous = this.lastHead;
    if (previous && (head.head <= previous.head || head.tree_size < previous.tree_size || head.timestamp <= previous.timestamp)) {
      return this.fail('inconsistent head', `head ${head.head} (tree size ${head.tree_size}) does not follow head ${previous.head} (tree size ${previous.tree_size})`, at);
    }
    if (head.tree_size !== range.size) return this.fail('malformed export', `head ${head.head} (tree size ${head.tree_size}) comes after ${range.size} leaves`, at);
    if (toHex(range.root()) !== head.root_hash) {
      return this.fail('inconsistent head', `head ${head.head} (tree size ${head.tree_size}) signs another root than its leaves make: a leaf and its record were changed together, or the head is not this log's`, at);
    }
    this.firstHead ??= head.head;
    this.lastHead = head;
  }

  /** A trusted head inside the export: the tree at its size must have its root. */
  private checkTrusted(): void {
    const trusted = this.trustedHead;
    if (!trusted || this.trustedChecked || !this.range || this.range.size !== trusted.tree_size) return;
    this.trustedChecked = true;
    if (toHex(this.range.root()) !== trusted.root_hash) {
      this.fail('inconsistent head', `the log's first ${trusted.tree_size} leaves are not those of the trusted head ${trusted.head}: the log was rewritten`, {
        leafIndex: trusted.tree_size - 1,
      });
    }
  }

  private lookAhead(leaf: LeafRecordJson | null, event: EntryEvent | null): void {
    const open = this.open;
    if (!open) return;
    const id = open.among === 'events' ? event?.idIf(open.lookFor) : leaf?.event_id;
    if (id === open.lookFor) {
      this.failure = { ...open.failure, kind: 'reordered', detail: open.ifFound };
      this.open = null;
    }
  }

  private failOpen(kind: FailureKind, detail: string, at: Partial<VerificationFailure>, open: Omit<OpenFailure, 'failure'>): void {
    this.fail(kind, detail, at);
    this.open = { failure: this.failure!, ...open };
  }

  private fail(kind: FailureKind, detail: string, at: Partial<Pick<VerificationFailure, 'position' | 'eventId' | 'leafIndex'>> = {}): void {
    if (this.failure) return;
    this.failure = { kind, detail, position: at.position ?? null, eventId: at.eventId ?? null, leafIndex: at.leafIndex ?? null };
  }
}

/** The one line `audit verify` prints. */
export function describeResult(result: VerificationResult): string {
  if (result.ok) return `verified: ${result.events} events, heads ${result.firstHead}..${result.lastHead}`;
  const f = result.failure!;
  const place = [f.position !== null ? `position ${f.position}` : null, f.leafIndex !== null ? `leaf ${f.leafIndex}` : null, f.eventId ? `event ${f.eventId}` : null].filter(Boolean).join(', ');
  return `FAILED${place ? ` at ${place}` : ''}: ${f.kind}: ${f.detail}`;
}

/** An entry's event: its bytes as the line carries them (hashed as they stand), parsed only when asked. */
class EntryEvent {
  private value: CanonicalEvent | null | undefined;

  constructor(private readonly bytes: Buffer) {}

  /** From a parsed line: its JCS bytes again. */
  static of(event: CanonicalEvent): EntryEvent {
    const entry = new EntryEvent(Buffer.from(canonicalText(event), 'utf8'));
    entry.value = event;
    return entry;
  }

  hash(): Buffer {
    return leafHash(this.bytes);
  }

  /** The event, or null when its bytes are not a JSON object with a string id and position. */
  parsed(): CanonicalEvent | null {
    if (this.value === undefined) {
      try {
        const value = JSON.parse(this.bytes.toString('utf8')) as Partial<CanonicalEvent> | null;
        this.value = value && typeof value.id === 'string' && typeof value.position === 'string' ? (value as CanonicalEvent) : null;
      } catch {
        this.value = null;
      }
    }
    return this.value;
  }

  /** Its id if it may be `id` (the bytes hold that text: no parse for every other line). */
  idIf(id: string): string | undefined {
    if (this.value === undefined && !this.bytes.includes(id)) return undefined;
    return this.parsed()?.id;
  }
}
