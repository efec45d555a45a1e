// The process's one Prometheus registry: the default process metrics (CPU, memory, event loop
// lag, GC), the HTTP metrics, and gauges that are read when /metrics is scraped (lags, delivery
// outcomes), each filled by a scrape hook its owner registers while it runs.
import { Registry, collectDefaultMetrics } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

/** Reads what a gauge shows at scrape time (a database query, a lag count); never throws out. */
export type ScrapeHook = () => Promise<void>;

const hooks = new Set<ScrapeHook>();
/** How long one scrape waits for its hooks; a slow one leaves its gauges as they were. */
const HOOK_TIMEOUT_MS = 5000;
let hooksRunning: Promise<void> | null = null;

/** Runs `hook` before each exposition until the returned function is called. */
export function onScrape(hook: ScrapeHook): () => void {
  hooks.add(hook);
  return () => void hooks.delete(hook);
}

function withinTimeout(work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, HOOK_TIMEOUT_MS);
    timer.unref();
  });
  return Promise.race([work.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}

/** The exposition in Prometheus's text format, after the scrape hooks ran (one run for concurrent scrapes). */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  hooksRunning ??= Promise.all([...hooks].map((hook) => withinTimeout(hook()))).then(
    () => undefined,
    () => undefined,
  );
  const running = hooksRunning;
  try {
    await running;
  } finally {
    if (hooksRunning === running) hooksRunning = null;
  }
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}
