// The alert rules through Prometheus's own tool: `promtool check rules` (syntax, PromQL, templates)
// and `promtool test rules` (deploy/prometheus/alerts.test.yml: each alert fires on its series,
// not before its `for`, and not on look-alikes). promtool is Debian's `prometheus` package
// (.ci/prometheus.sh installs it; PROMTOOL_PATH names another binary). In CI a missing promtool
// fails this suite; elsewhere it skips, saying so.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { requireComponent } from '../support/components.js';
import { ALERTS_FILE, ALERT_TESTS_FILE, ROOT, alertRules } from './support/named-metrics.js';

const run = promisify(execFile);

function promtool(): string | null {
  const given = process.env.PROMTOOL_PATH?.trim();
  if (given) return existsSync(given) ? given : null;
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin', '/usr/local/bin'])) {
    const candidate = path.join(dir, 'promtool');
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

describe('alert rules: promtool check and unit tests', function () {
  this.timeout(60_000);
  let binary: string;

  before(function () {
    const found = promtool();
    requireComponent(this, 'promtool', found !== null, 'PROMTOOL_PATH or promtool on PATH; install it with .ci/prometheus.sh');
    binary = found!;
  });

  it('passes promtool check rules', async () => {
    const { stdout } = await run(binary, ['check', 'rules', ALERTS_FILE], { cwd: ROOT });
    expect(stdout).to.match(/SUCCESS: \d+ rules found/);
  });

  it('passes promtool test rules (every alert unit-tested)', async () => {
    const result = await run(binary, ['test', 'rules', ALERT_TESTS_FILE], { cwd: ROOT }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`promtool test rules failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
    });
    expect(result.stdout).to.include('SUCCESS');
  });

  it('has a unit test for every alert', () => {
    const tests = readFileSync(ALERT_TESTS_FILE, 'utf8');
    for (const rule of alertRules()) expect(tests, `a test of ${rule.alert}`).to.match(new RegExp(`alertname: ${rule.alert}\\b`));
  });
});
