// The metrics the operators' files name: every PromQL expression of the alert rules
// (deploy/prometheus/alerts.yml) and of the Grafana dashboard (deploy/grafana/*.json), and a
// check of those names against what the services really export (their /metrics text).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ALERTS_FILE = path.join(ROOT, 'deploy/prometheus/alerts.yml');
export const ALERT_TESTS_FILE = path.join(ROOT, 'deploy/prometheus/alerts.test.yml');
export const GRAFANA_DIR = path.join(ROOT, 'deploy/grafana');

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export function alertRules(): AlertRule[] {
  const doc = load(readFileSync(ALERTS_FILE, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return doc.groups.flatMap((g) => g.rules);
}

export interface DashboardPanel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { x: number; y: number; w: number; h: number };
  readonly datasource?: { type: string; uid: string };
  readonly targets?: Array<{ refId: string; expr: string; datasource?: { type: string; uid: string } }>;
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: DashboardPanel[];
  readonly templating: { list: Array<{ name: string; type: string }> };
}

export function dashboards(): Array<{ file: string; dashboard: Dashboard }> {
  return readdirSync(GRAFANA_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ file: f, dashboard: JSON.parse(readFileSync(path.join(GRAFANA_DIR, f), 'utf8')) as Dashboard }));
}

/** The service metric names an expression uses (`up`, Prometheus's own, is not one). */
export function metricNames(expr: string): string[] {
  // Label values and matchers are in quotes: drop them so `outcome="failed"` names nothing.
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...new Set(bare.match(/\b(?:guestpass|process|nodejs)_[a-z0-9_]+\b/g) ?? [])];
}

/** Every metric the alert rules and the dashboards name, with where. */
export function namedMetrics(): Map<string, string[]> {
  const named = new Map<string, string[]>();
  const add = (expr: string, where: string) => {
    for (const name of metricNames(expr)) named.set(name, [...(named.get(name) ?? []), where]);
  };
  for (const rule of alertRules()) add(rule.expr, `alert ${rule.alert}`);
  for (const { file, dashboard } of dashboards()) for (const p of dashboard.panels) for (const t of p.targets ?? []) add(t.expr, `${file} "${p.title}"`);
  return named;
}

/** The metric families an exposition declares (`# TYPE name kind`). */
export function exportedFamilies(exposition: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/gm)) families.set(match[1]!, match[2]!);
  return families;
}

/** True when `name` is a declared family, or a histogram's or summary's _bucket/_sum/_count series. */
export function isExported(name: string, families: ReadonlyMap<string, string>): boolean {
  if (families.has(name)) return true;
  const suffix = /_(bucket|sum|count)$/.exec(name);
  if (!suffix) return false;
  const kind = families.get(name.slice(0, -suffix[0].length));
  return kind === 'histogram' || (kind === 'summary' && suffix[1] !== 'bucket');
}
