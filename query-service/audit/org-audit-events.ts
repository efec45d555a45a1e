// GET /api/v1/org/audit/events (scope org:audit:read): the organization's own events, oldest
// first, each with its inclusion proof against the latest signed tree head, and the consistency
// proof from the head the previous page (or `since_head`) was proved against. `guestpass audit
// verify --organization` checks the pages offline. Read from the notary's tables only (migration
// 015): events as the notary saw them, sealed personal data still sealed, nothing of another tenant
// (other leaves appear only as the hashes inside proofs).
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { validateQuery, type JsonSchema } from '../../shared/http/schema-validation.js';
import type { PageCursor } from '../../shared/http/page-cursor.js';
import { requireScope } from '../../shared/auth/scope-guard.js';
import { requirePrincipal } from '../../shared/auth/principal.js';
import { ValidationError } from '../../shared/errors.js';
import { consistencyProof, inclusionProofs } from '../../shared/audit/merkle-proofs.js';
import { toHex } from '../../shared/audit/merkle-hash.js';
import { headByNumber, latestHead, PostgresNodeStore } from '../../shared/audit/postgres-audit-tree.js';
import type { OrgAuditItem, OrgAuditPage } from '../../shared/audit/export-format.js';
import type { SignedTreeHead } from '../../shared/audit/tree-head.js';

export const AUDIT_SCOPE = 'org:audit:read';
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;

export const orgAuditQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Events per page.' },
    cursor: { type: 'string', minLength: 1, maxLength: 512, description: "The previous page's `next_cursor`, unchanged." },
    since_head: { type: 'integer', minimum: 1, description: 'A head saved earlier: the first page proves its head consistent with it.' },
  },
};

const hex = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const headSchema: JsonSchema = {
  type: 'object',
  required: ['head', 'tree_size', 'root_hash', 'timestamp', 'signature'],
  properties: {
    head: { type: 'integer', description: 'Sequence number of the head.' },
    tree_size: { type: 'integer' },
    root_hash: hex,
    timestamp: { type: 'integer', description: 'Milliseconds since the epoch, as signed.' },
    signature: { type: 'string', description: 'Compact JWS (EdDSA, typ guestpass-tree-head+jws) over the JCS of {tree_size, root_hash, timestamp}; keys at /.well-known/audit-keys.json.' },
  },
};

export const orgAuditPageSchema: JsonSchema = {
  type: 'object',
  required: ['success', 'organization', 'head', 'consistency', 'items', 'next_cursor', 'has_more'],
  properties: {
    success: { const: true },
    organization: { type: 'integer' },
    head: { oneOf: [headSchema, { type: 'null' }] },
    consistency: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['from_head', 'from_size', 'to_head', 'to_size', 'proof'],
          properties: { from_head: { type: 'integer' }, from_size: { type: 'integer' }, to_head: { type: 'integer' }, to_size: { type: 'integer' }, proof: { type: 'array', items: hex } },
        },
      ],
    },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['leaf_index', 'leaf_hash', 'event', 'withheld', 'inclusion_proof'],
        properties: {
          leaf_index: { type: 'integer' },
          leaf_hash: hex,
          event: {
            description: 'The event as stored and hashed (RFC 8785 JSON of position, stream, revision, id, type, data, metadata, recorded_at); null when withheld.',
            oneOf: [{ type: 'object' }, { type: 'null' }],
          },
          withheld: { type: ['string', 'null'], description: 'Why the content is withheld (a password hash); the leaf hash and proof still verify.' },
          inclusion_proof: { type: 'array', items: hex },
        },
      },
    },
    next_cursor: { type: ['string', 'null'] },
    has_more: { type: 'boolean' },
  },
};

interface Query {
  limit: number;
  cursor?: string;
  since_head?: number;
}

export function orgAuditEventsRoute(router: Router<HttpState>, deps: { db: Knex; cursor: PageCursor; authenticate: HttpMiddleware }): void {
  router.get('/audit/events', deps.authenticate, requireScope(AUDIT_SCOPE), validateQuery(orgAuditQuerySchema), async (ctx) => {
    const orgId = requirePrincipal(ctx.state).orgId;
    const { limit, cursor, since_head: sinceHead } = ctx.state.query as unknown as Query;
    const binding = { list: `org-audit:${orgId}`, search: null };
    let afterIndex = -1;
    let previousHead: number | null = sinceHead ?? null;
    if (cursor !== undefined) {
      const match = /^(\d+)_(\d+)$/.exec(deps.cursor.decodeTextId(cursor, binding).id);
      if (!match) throw new ValidationError('cursor is invalid: pass back the next_cursor of the previous page unchanged');
      afterIndex = Number(match[1]);
      previousHead = Number(match[2]);
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await auditPage(deps.db, deps.cursor, { orgId, limit, afterIndex, previousHead, binding });
  });
}

async function auditPage(
  db: Knex,
  cursor: PageCursor,
  q: { orgId: number; limit: number; afterIndex: number; previousHead: number | null; binding: { list: string; search: null } },
): Promise<OrgAuditPage> {
  const head = await latestHead(db);
  const base = { success: true as const, organization: q.orgId };
  if (!head) return { ...base, head: null, consistency: null, items: [], next_cursor: null, has_more: false };
  const signed: SignedTreeHead = { head: head.head, tree_size: head.tree_size, root_hash: head.root_hash, timestamp: head.timestamp, signature: head.signature };
  const nodes = new PostgresNodeStore(db);
  let consistency: OrgAuditPage['consistency'] = null;
  if (q.previousHead !== null && q.previousHead !== head.head) {
    const previous = await headByNumber(db, q.previousHead);
    if (!previous || previous.head > head.head) throw new ValidationError(`no head ${q.previousHead} to prove consistency from`);
    const proof = previous.tree_size === 0 ? [] : await consistencyProof(nodes, previous.tree_size, head.tree_size);
    consistency = { from_head: previous.head, from_size: previous.tree_size, to_head: head.head, to_size: head.tree_size, proof: proof.map(toHex) };
  }
  const { rows } = await db.raw<{ rows: Array<{ leaf_index: string; canonical: string | null; withheld: string | null; hash: Buffer }> }>(
    `SELECT e.leaf_index::text, e.canonical, e.withheld, n.hash FROM audit_org_events e
       JOIN audit_tree_nodes n ON n.level = 0 AND n.idx = e.leaf_index
      WHERE e.org_id = ? AND e.leaf_index > ? AND e.leaf_index < ? ORDER BY e.leaf_index LIMIT ?`,
    [q.orgId, q.afterIndex, head.tree_size, q.limit + 1],
  );
  const hasMore = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  const proofs = await inclusionProofs(nodes, page.map((r) => Number(r.leaf_index)), head.tree_size);
  const items: OrgAuditItem[] = page.map((r, i) => ({
    leaf_index: Number(r.leaf_index),
    leaf_hash: toHex(r.hash),
    event: r.canonical === null ? null : (JSON.parse(r.canonical) as OrgAuditItem['event']),
    withheld: r.withheld,
    inclusion_proof: proofs[i]!.map(toHex),
  }));
  const last = items.at(-1)?.leaf_index ?? q.afterIndex;
  const next = cursor.encode({ createdAt: new Date(head.timestamp).toISOString(), id: `${last}_${head.head}` }, q.binding);
  // Without more now, the cursor still lets the next request continue from here once new heads come.
  return { ...base, head: signed, consistency, items, next_cursor: next, has_more: hasMore };
}
