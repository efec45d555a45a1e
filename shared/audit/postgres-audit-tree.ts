// The audit tree in PostgreSQL (migration 016): complete subtrees, leaf records, the tree's reach,
// signed heads and a tenant's events. The notary writes a batch in one transaction; proofs read
// O(log n) nodes by primary key in one statement.
import { finished } from 'node:stream/promises';
import type { Knex } from 'knex';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { START, type Position } from '../event-store/event-store.js';
import { CompactRange, frontierNodes, type StoredNode } from './compact-range.js';
import { nodeKey, type TreeNode } from './merkle-ranges.js';
import type { NodeStore } from './merkle-proofs.js';
import type { SignedTreeHead } from './tree-head.js';

type Db = Knex | Knex.Transaction;

/** Arrays bind as PostgreSQL arrays (for unnest); knex's types do not say so. */
const arrays = (...values: unknown[]) => values as Knex.RawBinding[];

export class PostgresNodeStore implements NodeStore {
  constructor(private readonly db: Db) {}

  async nodes(wanted: readonly TreeNode[]): Promise<ReadonlyMap<string, Buffer>> {
    if (wanted.length === 0) return new Map();
    const { rows } = await this.db.raw<{ rows: Array<{ level: number; idx: string; hash: Buffer }> }>(
      `SELECT n.level, n.idx::text AS idx, n.hash FROM audit_tree_nodes n
         JOIN unnest(?::smallint[], ?::bigint[]) AS w(level, idx) ON n.level = w.level AND n.idx = w.idx`,
      arrays(wanted.map((n) => n.level), wanted.map((n) => String(n.index))),
    );
    return new Map(rows.map((r) => [nodeKey({ level: r.level, index: Number(r.idx) }), r.hash]));
  }
}

export interface TreeState {
  readonly treeSize: number;
  /** Position of the last leaf's event (START for an empty tree). */
  readonly position: Position;
}

export async function readTreeState(db: Db, options: { forUpdate?: boolean } = {}): Promise<TreeState> {
  const { rows } = await db.raw<{ rows: Array<{ tree_size: string; c: string; p: string }> }>(
    `SELECT tree_size::text, commit_position::text AS c, prepare_position::text AS p FROM audit_tree_state${options.forUpdate ? ' FOR UPDATE' : ''}`,
  );
  const row = rows[0];
  return row ? { treeSize: Number(row.tree_size), position: { commit: BigInt(row.c), prepare: BigInt(row.p) } } : { treeSize: 0, position: START };
}

/** The right edge of the stored tree of `size` leaves, to append from. */
export async function loadCompactRange(db: Db, size: number): Promise<CompactRange> {
  const wanted = frontierNodes(size);
  const found = await new PostgresNodeStore(db).nodes(wanted);
  const edge: StoredNode[] = wanted.map((n) => {
    const hash = found.get(nodeKey(n));
    if (!hash) throw new Error(`the audit tree of ${size} leaves lacks its node ${nodeKey(n)}`);
    return { ...n, hash };
  });
  return new CompactRange(size, edge);
}

export interface LeafRecord {
  readonly index: number;
  readonly eventId: string;
  readonly position: string;
  readonly orgId: number | null;
}

export interface OrgEventRow {
  readonly orgId: number;
  readonly index: number;
  readonly canonical: string | null;
  readonly withheld: string | null;
}

export interface TreeBatch {
  readonly fromSize: number;
  readonly toSize: number;
  readonly position: Position;
  readonly nodes: readonly StoredNode[];
  readonly leaves: readonly LeafRecord[];
  readonly orgEvents: readonly OrgEventRow[];
  readonly links: ReadonlyArray<readonly [string, number]>;
}

export class TreeMoved extends Error {
  override readonly name = 'TreeMoved';
}

/**
 * Writes a batch of leaves in one transaction, refusing (TreeMoved) when the tree is no longer
 * `fromSize` leaves. Nodes, leaf records and tenant rows go in with COPY (text format): per event
 * that is the cheapest way for both sides (no array literal to quote in Node.js, none to parse
 * and unnest in PostgreSQL), which is most of what the notary adds to an append.
 */
export async function writeTreeBatch(knex: Knex, batch: TreeBatch): Promise<void> {
  const client = (await knex.client.acquireConnection()) as pg.ClientBase;
  let open = false;
  try {
    await client.query('BEGIN');
    open = true;
    const { rows } = await client.query<{ tree_size: string }>('SELECT tree_size::text FROM audit_tree_state FOR UPDATE');
    const treeSize = Number(rows[0]?.tree_size ?? 0);
    if (treeSize !== batch.fromSize) throw new TreeMoved(`the audit tree has ${treeSize} leaves, not ${batch.fromSize}`);
    let nodes = '';
    for (const n of batch.nodes) nodes += `${n.level}\t${n.index}\t\\\\x${n.hash.toString('hex')}\n`;
    await copyIn(client, 'COPY audit_tree_nodes (level, idx, hash) FROM STDIN', nodes);
    let leaves = '';
    for (const l of batch.leaves) leaves += `${l.index}\t${l.eventId}\t${copyField(l.position)}\t${l.orgId ?? '\\N'}\n`;
    await copyIn(client, 'COPY audit_leaves (leaf_index, event_id, position, org_id) FROM STDIN', leaves);
    if (batch.orgEvents.length > 0) {
      let rows = '';
      for (const e of batch.orgEvents) rows += `${e.orgId}\t${e.index}\t${copyField(e.canonical)}\t${copyField(e.withheld)}\n`;
      await copyIn(client, 'COPY audit_org_events (org_id, leaf_index, canonical, withheld) FROM STDIN', rows);
    }
    if (batch.links.length > 0) {
      await client.query('INSERT INTO audit_org_links (key, org_id) SELECT * FROM unnest($1::text[], $2::integer[]) ON CONFLICT (key) DO NOTHING', [
        batch.links.map(([key]) => key),
        batch.links.map(([, org]) => org),
      ]);
    }
    await client.query(
      `INSERT INTO audit_tree_state (singleton, tree_size, commit_position, prepare_position, updated_at) VALUES (true, $1, $2, $3, now())
       ON CONFLICT (singleton) DO UPDATE SET tree_size = excluded.tree_size, commit_position = excluded.commit_position,
         prepare_position = excluded.prepare_position, updated_at = now()`,
      [batch.toSize, batch.position.commit.toString(), batch.position.prepare.toString()],
    );
    await client.query('COMMIT');
    open = false;
  } finally {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    await knex.client.releaseConnection(client);
  }
}

async function copyIn(client: pg.ClientBase, sql: string, text: string): Promise<void> {
  if (text === '') return;
  const copy = client.query(copyFrom(sql));
  copy.end(text);
  await finished(copy);
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A text field of a COPY text line: backslash, tab and line ends escaped; null as \N. */
function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return COPY_SPECIAL.test(value) ? value.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c]!) : value;
}

export async function orgLinks(db: Db, keys: readonly string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.raw<{ rows: Array<{ key: string; org_id: number }> }>('SELECT key, org_id FROM audit_org_links WHERE key = ANY(?::text[])', arrays([...new Set(keys)]));
  return new Map(rows.map((r) => [r.key, r.org_id]));
}

/** Leaf records from `fromIndex` on, with their stored hashes, in order. */
export async function leafRecords(db: Db, fromIndex: number, limit: number, beforeIndex = Number.MAX_SAFE_INTEGER): Promise<Array<LeafRecord & { hash: Buffer }>> {
  const { rows } = await db.raw<{ rows: Array<{ leaf_index: string; event_id: string; position: string; org_id: number | null; hash: Buffer | null }> }>(
    `SELECT l.leaf_index::text, l.event_id::text, l.position, l.org_id, n.hash FROM audit_leaves l
       LEFT JOIN audit_tree_nodes n ON n.level = 0 AND n.idx = l.leaf_index
      WHERE l.leaf_index >= ? AND l.leaf_index < ? ORDER BY l.leaf_index LIMIT ?`,
    [fromIndex, beforeIndex, limit],
  );
  return rows.map((r) => ({ index: Number(r.leaf_index), eventId: r.event_id, position: r.position, orgId: r.org_id, hash: r.hash ?? Buffer.alloc(32) }));
}

interface HeadRow {
  head: number;
  tree_size: string;
  root_hash: Buffer;
  signed_at: string;
  kid: string;
  signature: string;
  logged: boolean;
}

function toHead(row: HeadRow): SignedTreeHead & { logged: boolean; kid: string } {
  return {
    head: row.head,
    tree_size: Number(row.tree_size),
    root_hash: row.root_hash.toString('hex'),
    timestamp: Number(row.signed_at),
    signature: row.signature,
    kid: row.kid,
    logged: row.logged,
  };
}

export async function latestHead(db: Db): Promise<(SignedTreeHead & { logged: boolean }) | null> {
  const row = await db('audit_tree_heads').orderBy('head', 'desc').first<HeadRow | undefined>();
  return row ? toHead(row) : null;
}

export async function headByNumber(db: Db, head: number): Promise<SignedTreeHead | null> {
  const row = await db('audit_tree_heads').where({ head }).first<HeadRow | undefined>();
  return row ? toHead(row) : null;
}

/** Heads `from`..`to` (inclusive) in order, at most `limit`. */
export async function headsBetween(db: Db, from: number, to: number, limit = 1000): Promise<SignedTreeHead[]> {
  const rows = await db('audit_tree_heads').whereBetween('head', [from, to]).orderBy('head').limit(limit).select<HeadRow[]>('*');
  return rows.map(toHead);
}

export async function insertHead(db: Db, head: SignedTreeHead & { kid: string }): Promise<void> {
  await db('audit_tree_heads').insert({
    head: head.head,
    tree_size: head.tree_size,
    root_hash: Buffer.from(head.root_hash, 'hex'),
    signed_at: head.timestamp,
    kid: head.kid,
    signature: head.signature,
  });
}

export async function unloggedHeads(db: Db): Promise<SignedTreeHead[]> {
  const rows = await db('audit_tree_heads').where({ logged: false }).orderBy('head').select<HeadRow[]>('*');
  return rows.map(toHead);
}

export async function markHeadLogged(db: Db, head: number): Promise<void> {
  await db('audit_tree_heads').where({ head }).update({ logged: true });
}
