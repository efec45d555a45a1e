// How far behind the log each read model and each reactor is, read when /metrics is scraped:
// the events after its checkpoint up to the log's head (projections/status.ts counts them the
// same way for `guestpass projections status`), counted up to LAG_CAP.
import type { Knex } from 'knex';
import { Gauge } from 'prom-client';
import type { EventStore } from '../shared/event-store/event-store.js';
import { metricsRegistry, onScrape } from '../shared/metrics/registry.js';
import { countAfter, projectionStatus } from './status.js';

/** A scrape reads at most this many events per distinct checkpoint; a larger lag shows as this. */
export const LAG_CAP = 10_000;

const projectionLag = new Gauge({
  name: 'guestpass_projection_lag_events',
  help: `Events in the log after each read model's checkpoint (head minus checkpoint), counted up to ${LAG_CAP}.`,
  labelNames: ['projection'] as const,
  registers: [metricsRegistry],
});

const reactorLag = new Gauge({
  name: 'guestpass_reactor_lag_events',
  help: `Events in the log after each reactor's checkpoint (pass event forwarder, pass delivery), counted up to ${LAG_CAP}.`,
  labelNames: ['reactor'] as const,
  registers: [metricsRegistry],
});

/** Fills the two gauges on every scrape until the returned function is called. */
export function observeLogLag(deps: { readonly knex: Knex; readonly store: EventStore }): () => void {
  return onScrape(async () => {
    // A scrape that cannot read the log shows no lag rather than an old one.
    projectionLag.reset();
    reactorLag.reset();
    const report = await projectionStatus(deps, { lagCap: LAG_CAP });
    for (const p of report.projections) if (p.lag !== null) projectionLag.set({ projection: p.name }, p.lag);

    const { rows } = await deps.knex.raw<{ rows: Array<{ name: string; c: string; p: string }> }>(
      'SELECT name, commit_position::text AS c, prepare_position::text AS p FROM forwarder_checkpoints ORDER BY name',
    );
    for (const row of rows) {
      const { lag } = await countAfter(deps.store, { commit: BigInt(row.c), prepare: BigInt(row.p) }, report.head, LAG_CAP);
      reactorLag.set({ reactor: row.name }, lag);
    }
  });
}
