// The audit notary's one event (projections/audit-notary.ts), part of the DomainEvent union in
// events.ts: a signed tree head, appended to the log on the stream `audit-tree-heads` (revision
// head - 1), so the log carries its own checkpoints and deleting its tail cannot delete the
// evidence of it. It becomes a leaf of a later head like any other event.
import type { AnySchemaObject } from 'ajv/dist/2020.js';

export const AUDIT_TREE_HEADS_STREAM = 'audit-tree-heads';

export type AuditTreeHeadSigned = {
  type: 'AuditTreeHeadSigned';
  data: {
    /** 1 for the first head, then one more each. */
    head: number;
    treeSize: number;
    /** SHA-256 root of the first treeSize leaves, hex. */
    rootHash: string;
    /** Milliseconds since the epoch, as signed. */
    timestamp: number;
    kid: string;
    /** Compact JWS (EdDSA) over the JCS of {tree_size, root_hash, timestamp}. */
    signature: string;
  };
};

type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };

export const auditEventCatalogue: {
  readonly AuditTreeHeadSigned: { readonly version: number; readonly properties: PropertiesOf<AuditTreeHeadSigned['data']> };
} = {
  AuditTreeHeadSigned: {
    version: 1,
    properties: {
      head: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      treeSize: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      rootHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      timestamp: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      kid: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
      signature: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$', maxLength: 2000 },
    },
  },
};
