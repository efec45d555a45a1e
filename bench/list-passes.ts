// Pass listing at scale: `npx tsx bench/list-passes.ts [--passes 1000000] [--requests 1000]`.
// Runs the real stack in-process (embedded PostgreSQL, or DATABASE_URL's server), then seeds ONE
// organization with `passes` passes by bulk SQL INSERT straight into the pass_list read model
// (and organizations.pass_count), not through events: this measures the read path only. Then it
// times GET /api/v1/org/passes?limit=30 over HTTP, one request at a time: the first page, deep
// pages (cursors minted at fixed depths), and with `search` (frequent, rare and absent terms).
// Target: p99 under 10 ms for every case.
import http from 'node:http';
import os from 'node:os';
import { createHash } from 'node:crypto';
import { startStack } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { PageCursor } from '../shared/http/page-cursor.js';
import { percentile } from './percentile.js';
import { integerOption } from './command-line-options.js';
import { runThenExit } from './run-then-exit.js';
import { withServiceNodeFlags } from './service-node-flags.js';

const PASSES = integerOption('passes', 1_000_000);
const REQUESTS = integerOption('requests', 1000);
const CASE_TIME_LIMIT_MS = 30_000;
const CURSOR_SECRET = 'bench-list-passes-cursor-secret-0123456789';

async function main(): Promise<void> {
  console.log(`starting the stack on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({ label: 'bench_list', pageCursorSecret: CURSOR_SECRET });
  const tenant = await stack.seed.tenant({ scopes: ['org:passes:read'] });
  const { table_name: table } = await stack.db('projection_checkpoints').where({ name: 'pass_list' }).first('table_name');

  console.log(`seeding ${PASSES.toLocaleString('en')} passes by bulk INSERT into ${table} (not through events) ...`);
  const seeded = performance.now();
  const chunk = 200_000;
  for (let from = 1; from <= PASSES; from += chunk) {
    const to = Math.min(PASSES, from + chunk - 1);
    // Names from small pools (so some terms are frequent); email and phone carry random parts
    // (so a guest-specific term is rare, as real addresses are); one pass a minute back in time.
    await stack.db.raw(
      `INSERT INTO ?? (pass_id, public_id, org_id, facility_id, created_by, batch_id, stream_name, status,
                       first_name, last_name, email, phone, arrival_date, arrival_time, valid_from, valid_until,
                       qr_hash, created_at, search_text, _commit, _prepare)
       SELECT n + 1000000, 'gst_' || md5(n::text), ?, ?, ?, md5('b' || n), 'bench', 'expected',
              f.name, l.name, g.email, g.phone,
              '2030-01-01', NULL, now(), now() + interval '1 day',
              md5('q' || n), now() - n * interval '1 minute',
              lower(f.name || ' ' || l.name || ' ' || g.email || ' ' || g.phone), 0, 0
       FROM generate_series(?::int, ?::int) AS n
       CROSS JOIN LATERAL (SELECT (ARRAY['Ann','Bob','Chen','Dana','Emil','Fatima','Goran','Hana','Ivan','Jun'])[1 + n % 10] AS name) f
       CROSS JOIN LATERAL (SELECT (ARRAY['Smith','Garcia','Müller','Okafor','Tanaka','Novak','Silva','Kowalski','Haddad','Larsen','Quispe'])[1 + n % 11] AS name) l
       CROSS JOIN LATERAL (SELECT lower(f.name) || '.' || substr(md5('e' || n), 1, 8) || '@' ||
                                  (ARRAY['gmail.com','outlook.com','example.org','company.example','mail.example'])[1 + n % 5] AS email,
                                  '+49' || (('x' || substr(md5('p' || n), 1, 12))::bit(48)::bigint % 10000000000)::text AS phone) g`,
      [table, tenant.orgId, tenant.facilityId, tenant.userId, from, to],
    );
    process.stdout.write(`  ${to.toLocaleString('en')}\r`);
  }
  await stack.db('organizations').where({ org_id: tenant.orgId }).update({ pass_count: PASSES });
  await stack.db.raw('VACUUM ANALYZE ??', [table]);
  // The bulk load's WAL calls for a checkpoint; taken now, its writes do not land in the first case.
  await stack.db.raw('CHECKPOINT');
  console.log(`seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

  const cursors = new PageCursor(CURSOR_SECRET);
  /** A cursor pointing after the pass at `depth` (0 = newest) of the list for `search`. */
  async function cursorAt(depth: number, search: string | null): Promise<string> {
    const query = stack.db(table).where({ org_id: tenant.orgId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'pass_id', order: 'desc' }]).offset(depth).first(
      'pass_id',
      stack.db.raw(`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`),
    );
    if (search) query.whereRaw('search_text LIKE ?', [`%${search}%`]);
    const row = (await query) as { pass_id: number; cursor_at: string } | undefined;
    if (!row) throw new Error(`no pass at depth ${depth}${search ? ` for "${search}"` : ''}`);
    return cursors.encode({ createdAt: row.cursor_at, id: Number(row.pass_id) }, { list: `org-passes:${tenant.orgId}`, search });
  }

  // The random part of one guest's email address: a term only that pass contains.
  const rareTerm = createHash('md5').update(`e${Math.floor(PASSES / 2)}`).digest('hex').slice(0, 8);
  const cases: Array<{ name: string; query: string }> = [
    { name: 'first page', query: '?limit=30' },
    { name: 'page at depth 10,000', query: `?limit=30&cursor=${encodeURIComponent(await cursorAt(10_000, null))}` },
    { name: `page at depth ${Math.floor(PASSES * 0.9).toLocaleString('en')}`, query: `?limit=30&cursor=${encodeURIComponent(await cursorAt(Math.floor(PASSES * 0.9), null))}` },
    { name: 'search "ann" (1 in 10), first page', query: '?limit=30&search=Ann' },
    { name: 'search "ann", page at depth 50,000', query: `?limit=30&search=Ann&cursor=${encodeURIComponent(await cursorAt(Math.min(50_000, Math.floor(PASSES / 20)), 'ann'))}` },
    { name: 'search "müller" (1 in 11)', query: `?limit=30&search=${encodeURIComponent('Müller')}` },
    { name: 'search "ann okafor" (1 in 110)', query: `?limit=30&search=${encodeURIComponent('ann okafor')}` },
    { name: `search "${rareTerm}" (1 pass)`, query: `?limit=30&search=${encodeURIComponent(rareTerm)}` },
    { name: 'search "gmail.com" (1 in 5)', query: '?limit=30&search=gmail.com' },
    { name: 'search "zzzq" (no pass)', query: '?limit=30&search=zzzq' },
  ];

  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (query: string) =>
    new Promise<{ status: number; items: number }>((resolve, reject) => {
      const req = http.request(new URL(`/api/v1/org/passes${query}`, stack.baseUrl), { agent, headers: { Authorization: `Bearer ${tenant.apiKey}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, items: res.statusCode === 200 ? (JSON.parse(text) as { items: unknown[] }).items.length : 0 }));
      });
      req.on('error', reject);
      req.end();
    });

  console.log('');
  console.log(`GET /api/v1/org/passes, ${PASSES.toLocaleString('en')} passes in one organization, one request at a time, ${REQUESTS} requests per case`);
  console.log(`  ${'case'.padEnd(44)} ${'items'.padStart(5)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'p99'.padStart(8)}  target p99 < 10 ms`);
  let allMet = true;
  for (const c of cases) {
    for (let i = 0; i < 20; i++) await get(c.query); // warm up
    const latencies: number[] = [];
    let items = 0;
    const until = performance.now() + CASE_TIME_LIMIT_MS;
    for (let i = 0; i < REQUESTS && performance.now() < until; i++) {
      const started = performance.now();
      const res = await get(c.query);
      latencies.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`${c.name}: status ${res.status}`);
      items = res.items;
    }
    latencies.sort((a, b) => a - b);
    const p99 = percentile(latencies, 99);
    allMet &&= p99 < 10;
    const ms = (v: number) => `${v.toFixed(2)}ms`.padStart(8);
    console.log(`  ${c.name.padEnd(44)} ${String(items).padStart(5)} ${ms(percentile(latencies, 50))} ${ms(percentile(latencies, 95))} ${ms(p99)}  ${p99 < 10 ? 'met' : 'NOT met'}`);
  }
  console.log(`  overall: ${allMet ? 'every case met' : 'NOT every case met'} the p99 target`);
  console.log(`  machine       ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);

  agent.destroy();
  await stack.stop();
  await stopTestDatabases();
}

withServiceNodeFlags();
runThenExit(main);
