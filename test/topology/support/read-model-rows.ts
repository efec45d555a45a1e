// Every row of every read model (through the view each projection's queries use), in a form to
// compare: one canonical JSON text per row, sorted. A read model the live runners kept through
// crashes must equal the one a rebuild replays from the log, row for row: an event applied twice
// (or lost) shows as a row that differs.
import type { Knex } from 'knex';
import { ALL_PROJECTIONS } from '../../../projections/all-projections.js';
import { quoteIdent } from '../../../projections/generation-tables.js';

export type ReadModelRows = ReadonlyMap<string, readonly string[]>;

function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export async function readModelRows(knex: Knex, names: readonly string[] = ALL_PROJECTIONS.map((p) => p.name)): Promise<ReadModelRows> {
  const out = new Map<string, string[]>();
  for (const name of names) {
    const { rows } = await knex.raw<{ rows: Record<string, unknown>[] }>(`SELECT * FROM ${quoteIdent(name)}`);
    out.set(name, rows.map((r) => JSON.stringify(canonical(r))).sort());
  }
  return out;
}

/** What differs, per read model: rows only in `live`, rows only in `rebuilt` (a few of each). */
export function readModelDifferences(live: ReadModelRows, rebuilt: ReadModelRows, shown = 3): string[] {
  const differences: string[] = [];
  for (const [name, liveRows] of live) {
    const rebuiltRows = rebuilt.get(name) ?? [];
    const count = (rows: readonly string[]) => rows.reduce((m, r) => m.set(r, (m.get(r) ?? 0) + 1), new Map<string, number>());
    const a = count(liveRows);
    const b = count(rebuiltRows);
    const onlyLive = [...a].flatMap(([r, n]) => Array<string>(Math.max(0, n - (b.get(r) ?? 0))).fill(r));
    const onlyRebuilt = [...b].flatMap(([r, n]) => Array<string>(Math.max(0, n - (a.get(r) ?? 0))).fill(r));
    if (onlyLive.length === 0 && onlyRebuilt.length === 0) continue;
    differences.push(
      `${name}: ${liveRows.length} rows live, ${rebuiltRows.length} rebuilt; ${onlyLive.length} only live, ${onlyRebuilt.length} only rebuilt\n` +
        onlyLive.slice(0, shown).map((r) => `  live:    ${r.slice(0, 400)}`).join('\n') +
        (onlyLive.length && onlyRebuilt.length ? '\n' : '') +
        onlyRebuilt.slice(0, shown).map((r) => `  rebuilt: ${r.slice(0, 400)}`).join('\n'),
    );
  }
  return differences;
}
