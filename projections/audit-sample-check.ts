// Tamper evidence while the service runs: the notary re-reads a random sample of old leaves from
// the log every few minutes and compares each with what it notarized (shared/audit/leaf-check.ts).
// A mismatch is a loud error log, `guestpass_audit_mismatches_total`, and the projections
// process's /readyz failing `audit_log` for as long as any mismatched leaf still mismatches
// (every later round checks them again beside its new sample).
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import { Counter } from 'prom-client';
import type { Logger } from '../shared/logger.js';
import { parsePosition, START, type EventStore } from '../shared/event-store/event-store.js';
import { canonicalEvent, eventLeafHash } from '../shared/audit/audit-leaf.js';
import { checkLeaf, type LeafFinding } from '../shared/audit/leaf-check.js';
import { readTreeState } from '../shared/audit/postgres-audit-tree.js';
import { metricsRegistry } from '../shared/metrics/registry.js';
import type { ReadinessCheck } from '../shared/http/readiness.js';

const mismatches = new Counter({
  name: 'guestpass_audit_mismatches_total',
  help: 'Leaves of the audit tree whose event in the log no longer matches what the notary notarized (changed, missing, extra or reordered), found by its sample check.',
  registers: [metricsRegistry],
});

export interface SampleFinding extends LeafFinding {
  readonly index: number;
}

/** The mismatched leaves this process knows of: what /readyz reports. */
export class AuditIntegrity {
  readonly mismatched = new Map<number, SampleFinding>();

  readinessCheck(): ReadinessCheck {
    return {
      name: 'audit_log',
      check: async () => {
        if (this.mismatched.size > 0) throw new Error(`${this.mismatched.size} audit leaves no longer match the log`);
      },
    };
  }
}

/** Checks the leaves at `indexes` against the log as it is now; records and reports each mismatch. */
export async function checkLeaves(
  deps: { readonly knex: Knex; readonly store: EventStore; readonly logger?: Logger; readonly integrity: AuditIntegrity },
  indexes: readonly number[],
): Promise<SampleFinding[]> {
  const wanted = [...new Set(indexes)].sort((a, b) => a - b);
  if (wanted.length === 0) return [];
  const previous = wanted.map((i) => i - 1).filter((i) => i >= 0);
  const { rows } = await deps.knex.raw<{ rows: Array<{ leaf_index: string; event_id: string; position: string; hash: Buffer | null }> }>(
    `SELECT l.leaf_index::text, l.event_id::text, l.position, n.hash FROM audit_leaves l
       LEFT JOIN audit_tree_nodes n ON n.level = 0 AND n.idx = l.leaf_index
      WHERE l.leaf_index = ANY(?::bigint[])`,
    [[...new Set([...wanted, ...previous])].map(String)] as unknown as Knex.RawBinding[],
  );
  const byIndex = new Map(rows.map((r) => [Number(r.leaf_index), r]));
  const findings: SampleFinding[] = [];
  for (const index of wanted) {
    const recorded = byIndex.get(index);
    if (!recorded) continue;
    const before = index === 0 ? START : parsePosition(byIndex.get(index - 1)?.position ?? '0/0');
    const [event] = await deps.store.readAll({ after: before, maxCount: 1 });
    const found = event ? { id: event.id, position: canonicalEvent(event).position, hash: eventLeafHash(canonicalEvent(event)) } : null;
    const finding = checkLeaf({ index, eventId: recorded.event_id, position: recorded.position, hash: recorded.hash ?? Buffer.alloc(32) }, found);
    if (finding) {
      const result = { ...finding, index };
      findings.push(result);
      if (!deps.integrity.mismatched.has(index)) mismatches.inc();
      deps.integrity.mismatched.set(index, result);
      deps.logger?.error({ leaf: index, problem: finding.problem }, `AUDIT LOG MISMATCH: ${finding.detail}`);
    } else {
      deps.integrity.mismatched.delete(index);
    }
  }
  return findings;
}

/** One round: `size` random leaves below the tree's size, and every leaf that mismatched before. */
export async function checkSample(
  deps: { readonly knex: Knex; readonly store: EventStore; readonly logger?: Logger; readonly integrity: AuditIntegrity },
  size: number,
): Promise<SampleFinding[]> {
  const { treeSize } = await readTreeState(deps.knex);
  const sample = new Set(deps.integrity.mismatched.keys());
  if (treeSize > 0) for (let i = 0; i < Math.min(size, treeSize); i++) sample.add(randomInt(treeSize));
  return checkLeaves(deps, [...sample]);
}
