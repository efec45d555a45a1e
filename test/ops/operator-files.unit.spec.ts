// The operators' files read as files: the alert rules carry a severity, a summary and a runbook
// paragraph that the README really has; the Grafana dashboard is well-formed (unique ids, every
// panel on the 24-column grid without overlaps, a query per panel through the datasource
// variable); and the metric names both use are parsed as the scrape test checks them.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { alertRules, dashboards, exportedFamilies, isExported, metricNames, namedMetrics, ROOT } from './support/named-metrics.js';

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('operator files: alert rules and the Grafana dashboard', () => {
  const rules = alertRules();

  it('has a rule for each thing that should wake an operator', () => {
    const names = rules.map((r) => r.alert);
    for (const expected of [
      'GuestpassProjectionLagGrowing',
      'GuestpassReactorLagGrowing',
      'GuestpassRevocationToDoorSlow',
      'GuestpassDoorGatewayNotActive',
      'GuestpassDeliveryFailuresRising',
      'GuestpassHttp5xxRate',
      'GuestpassNotReady',
      'GuestpassAuditMismatch',
    ]) {
      expect(names, expected).to.include(expected);
    }
    expect(new Set(names).size, 'alert names are unique').to.equal(names.length);
  });

  it('gives every rule a severity, a summary and a runbook paragraph the README has', () => {
    const readme = anchors(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    for (const rule of rules) {
      expect(rule.labels?.severity, `${rule.alert} severity`).to.be.oneOf(['page', 'ticket']);
      expect(rule.annotations?.summary, `${rule.alert} summary`).to.be.a('string').and.not.equal('');
      const runbook = rule.annotations?.runbook ?? '';
      const match = /^README\.md#(.+)$/.exec(runbook);
      expect(match, `${rule.alert} runbook "${runbook}"`).to.not.equal(null);
      expect(readme.has(match![1]!), `${rule.alert}: README has no heading #${match![1]}`).to.equal(true);
    }
  });

  it('has a dashboard whose panels have unique ids, fit the grid without overlapping, and each query through the datasource variable', () => {
    const found = dashboards();
    expect(found.map((d) => d.file)).to.include('guestpass-operations.json');
    for (const { file, dashboard } of found) {
      expect(dashboard.uid, file).to.be.a('string').and.match(/^[a-z0-9-]{1,40}$/);
      expect(dashboard.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource'), `${file}: a datasource variable`).to.equal(true);
      const ids = dashboard.panels.map((p) => p.id);
      expect(new Set(ids).size, `${file}: unique panel ids`).to.equal(ids.length);
      const cells = new Map<string, string>();
      for (const panel of dashboard.panels) {
        const { x, y, w, h } = panel.gridPos;
        expect(x >= 0 && w > 0 && x + w <= 24 && y >= 0 && h > 0, `${file} "${panel.title}" gridPos ${JSON.stringify(panel.gridPos)}`).to.equal(true);
        for (let i = x; i < x + w; i++) {
          for (let j = y; j < y + h; j++) {
            const other = cells.get(`${i},${j}`);
            expect(other, `${file}: "${panel.title}" overlaps "${other}"`).to.equal(undefined);
            cells.set(`${i},${j}`, panel.title);
          }
        }
        if (panel.type === 'row') continue;
        expect(panel.datasource?.uid, `${file} "${panel.title}" datasource`).to.equal('${datasource}');
        expect(panel.targets, `${file} "${panel.title}" queries`).to.be.an('array').that.is.not.empty;
        for (const target of panel.targets!) {
          expect(target.expr.trim(), `${file} "${panel.title}" ${target.refId}`).to.not.equal('');
          const names = metricNames(target.expr);
          expect(names.length > 0 || /\bup\b/.test(target.expr), `${file} "${panel.title}" ${target.refId} names a metric`).to.equal(true);
        }
      }
    }
  });

  it('names in both only metrics of the service and the process (the scrape test checks they exist)', () => {
    const named = namedMetrics();
    expect([...named.keys()]).to.include.members(['guestpass_http_requests_total', 'guestpass_revocation_door_ack_seconds_bucket', 'guestpass_ready']);
    expect(metricNames('sum by (channel) (guestpass_pass_deliveries{outcome="failed", note="guestpass_fake_total"})')).to.deep.equal(['guestpass_pass_deliveries']);
  });

  it("tells a histogram's series from a family that is not exported", () => {
    const families = exportedFamilies('# HELP a_seconds x\n# TYPE a_seconds histogram\na_seconds_bucket{le="1"} 0\n# TYPE b_total counter\n');
    expect(isExported('a_seconds_bucket', families)).to.equal(true);
    expect(isExported('a_seconds_count', families)).to.equal(true);
    expect(isExported('b_total', families)).to.equal(true);
    expect(isExported('b_total_bucket', families)).to.equal(false);
    expect(isExported('c_total', families)).to.equal(false);
  });
});
