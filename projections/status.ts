// Where each projection is: its checkpoint, generation, how far behind the log it is, any error
// that stopped it, and a rebuild in progress. For `guestpass projections status`.
import type { Knex } from 'knex';
import { comparePositions, positionToString, type EventStore, type Position } from '../shared/event-store/event-store.js';
import { ALL_PROJECTIONS } from './all-projections.js';
import { CHECKPOINT_COLUMNS, toCheckpoint, type CheckpointRecord } from './generation-tables.js';
import type { AnyProjection } from './projection.js';
import { recordedCheckpointStore, REBUILD_COMMAND } from './checkpoint-store-identity.js';

export interface ProjectionStatus {
  readonly name: string;
  /** False until a runner or rebuild has created the read model. */
  readonly exists: boolean;
  readonly generation: number | null;
  readonly tableName: string | null;
  /** Version the rows were built with, and the version of this code. */
  readonly version: number | null;
  readonly codeVersion: number | null;
  readonly position: Position | null;
  /** Events in the log after the checkpoint, counted up to `lagCap`. */
  readonly lag: number | null;
  readonly lagCapped: boolean;
  readonly error: string | null;
  readonly updatedAt: Date | null;
  readonly rebuild: { readonly generation: number; readonly tableName: string; readonly position: Position; readonly startedAt: Date } | null;
}

export interface StatusReport {
  readonly head: Position;
  /** The configured event store's identity, and the one the checkpoints count in (null: none recorded yet). */
  readonly eventStore: { readonly identity: string; readonly checkpointsCountIn: string | null };
  readonly projections: readonly ProjectionStatus[];
}

export interface StatusOptions {
  readonly projections?: readonly AnyProjection[];
  /** Stop counting lag at this many events (it reads them). Default 100,000. */
  readonly lagCap?: number;
}

export async function projectionStatus(deps: { readonly knex: Knex; readonly store: EventStore }, options: StatusOptions = {}): Promise<StatusReport> {
  const known = options.projections ?? ALL_PROJECTIONS;
  const lagCap = options.lagCap ?? 100_000;
  const head = await deps.store.headPosition();
  const eventStore = { identity: await deps.store.identity(), checkpointsCountIn: await recordedCheckpointStore(deps.knex) };
  const { rows } = await deps.knex.raw<{ rows: CheckpointRecord[] }>(`SELECT ${CHECKPOINT_COLUMNS} FROM projection_checkpoints ORDER BY name`);
  const rebuilds = await deps.knex.raw<{
    rows: Array<{ name: string; generation: number; table_name: string; c: string; p: string; started_at: Date }>;
  }>('SELECT name, generation, table_name, position_commit::text AS c, position_prepare::text AS p, started_at FROM projection_rebuilds');
  const checkpoints = new Map(rows.map((r) => [r.name, toCheckpoint(r)]));
  const rebuildOf = new Map(rebuilds.rows.map((r) => [r.name, r]));
  // Known projections first in their usual order, then any others the table holds.
  const names = [...known.map((p) => p.name), ...[...checkpoints.keys()].filter((n) => !known.some((p) => p.name === n))];
  const lagCache = new Map<string, Promise<{ lag: number; capped: boolean }>>();
  const lagAt = (position: Position) => {
    const key = positionToString(position);
    let lag = lagCache.get(key);
    if (!lag) {
      lag = countAfter(deps.store, position, head, lagCap);
      lagCache.set(key, lag);
    }
    return lag;
  };

  const projections: ProjectionStatus[] = [];
  for (const name of names) {
    const checkpoint = checkpoints.get(name);
    const code = known.find((p) => p.name === name);
    const rebuild = rebuildOf.get(name);
    const lag = checkpoint ? await lagAt(checkpoint.position) : null;
    projections.push({
      name,
      exists: Boolean(checkpoint),
      generation: checkpoint?.generation ?? null,
      tableName: checkpoint?.tableName ?? null,
      version: checkpoint?.version ?? null,
      codeVersion: code?.version ?? null,
      position: checkpoint?.position ?? null,
      lag: lag?.lag ?? null,
      lagCapped: lag?.capped ?? false,
      error: checkpoint?.error ?? null,
      updatedAt: checkpoint?.updatedAt ?? null,
      rebuild: rebuild
        ? {
            generation: Number(rebuild.generation),
            tableName: rebuild.table_name,
            position: { commit: BigInt(rebuild.c), prepare: BigInt(rebuild.p) },
            startedAt: rebuild.started_at,
          }
        : null,
    });
  }
  return { head, eventStore, projections };
}

/** Events after `position` up to `head`, through the port (so for every adapter), capped. */
export async function countAfter(store: EventStore, position: Position, head: Position, cap: number): Promise<{ lag: number; capped: boolean }> {
  let count = 0;
  let after = position;
  while (count < cap && comparePositions(after, head) < 0) {
    const page = await store.readAll({ after, maxCount: Math.min(5000, cap - count) });
    if (page.length === 0) break;
    const upToHead = page.filter((e) => comparePositions(e.position, head) <= 0);
    count += upToHead.length;
    if (upToHead.length < page.length) break;
    after = page.at(-1)!.position;
  }
  return { lag: count, capped: count >= cap };
}

/** JSON-safe form (positions as `commit/prepare` strings), for `--json`. */
export function statusToJson(report: StatusReport): Record<string, unknown> {
  return {
    head: positionToString(report.head),
    event_store: report.eventStore.identity,
    checkpoints_event_store: report.eventStore.checkpointsCountIn,
    projections: report.projections.map((p) => ({
      name: p.name,
      exists: p.exists,
      generation: p.generation,
      table: p.tableName,
      version: p.version,
      code_version: p.codeVersion,
      position: p.position ? positionToString(p.position) : null,
      lag: p.lag,
      lag_capped: p.lagCapped,
      error: p.error,
      updated_at: p.updatedAt?.toISOString() ?? null,
      rebuild: p.rebuild
        ? { generation: p.rebuild.generation, table: p.rebuild.tableName, position: positionToString(p.rebuild.position), started_at: p.rebuild.startedAt.toISOString() }
        : null,
    })),
  };
}

/** A plain table for a terminal. */
export function formatStatus(report: StatusReport): string {
  const header = ['PROJECTION', 'GEN', 'VERSION', 'POSITION', 'LAG', 'STATE'];
  const lines = report.projections.map((p) => {
    const version = p.version === null ? '-' : p.version === p.codeVersion ? String(p.version) : `${p.version} (code ${p.codeVersion ?? '-'})`;
    const state = !p.exists
      ? 'not created'
      : p.error
        ? `STOPPED: ${p.error}`
        : p.rebuild
          ? `rebuilding g${p.rebuild.generation} at ${positionToString(p.rebuild.position)}`
          : p.lag === 0
            ? 'up to date'
            : 'catching up';
    const lag = p.lag === null ? '-' : `${p.lag}${p.lagCapped ? '+' : ''}`;
    return [p.name, p.generation === null ? '-' : String(p.generation), version, p.position ? positionToString(p.position) : '-', lag, state];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const { identity, checkpointsCountIn } = report.eventStore;
  const store =
    checkpointsCountIn === null || checkpointsCountIn === identity
      ? `event store ${identity}`
      : `event store ${identity}, but the checkpoints count in ${checkpointsCountIn}: the positions and lag below are not this store's, ` +
        `and the projections, the forwarder and pass delivery refuse to start until \`${REBUILD_COMMAND}\` adopts this store ` +
        `(or ${checkpointsCountIn} is configured again)`;
  return [store, `head ${positionToString(report.head)}`, row(header), ...lines.map(row)].join('\n');
}
