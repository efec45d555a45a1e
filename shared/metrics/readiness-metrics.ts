// What /readyz says, as a gauge read at each scrape, so an alert can see an instance that stays
// unready (a part it cannot reach, a start that never ends) without probing /readyz itself.
import { Gauge } from 'prom-client';
import type { Readiness } from '../http/readiness.js';
import { metricsRegistry, onScrape } from './registry.js';

const ready = new Gauge({
  name: 'guestpass_ready',
  help: 'Whether this process is ready (1: /readyz answers 200) or not (0: starting, stopping, a standby door-gateway, or a part it uses is unreachable).',
  registers: [metricsRegistry],
});

/** Fills the gauge on every scrape until the returned function is called. */
export function observeReadiness(readiness: Readiness, lifecycle: () => 'starting' | 'serving' | 'stopping'): () => void {
  return onScrape(async () => {
    if (lifecycle() !== 'serving') return void ready.set(0);
    const report = await readiness.report().catch(() => ({ ready: false }));
    ready.set(report.ready ? 1 : 0);
  });
}
