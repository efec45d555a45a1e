// The console's pages at scale: `npx tsx bench/console.ts [--members 200000] [--passes 1000000]
// [--requests 500]`, or `--smoke` (2,000 members, 10,000 passes, 50 requests: seconds, for CI).
// Runs the real stack in-process (embedded PostgreSQL, or DATABASE_URL's server) and seeds ONE
// organization by bulk SQL INSERT straight into the read models' generation tables (as
// bench/member-directory.ts does; not through events: this measures the read path only):
// `members` members (sealed contacts, one with a known name), `passes` passes over 20 facilities
// and 400 days (pass_list and front_desk_visits), 5,000 of them the host's (with their
// pass_batches rows). Then, one request at a time over HTTP with a console session: the members
// page with a search, the host's passes page and the front desk page, each beside the API call
// that reads the same rows (GET /api/v1/org/members with the same search at the contact tier, GET
// /api/v1/passes as the host; the front desk has no API, so its two queries alone, run in this
// process, are beside it). Every answer is checked (the searched member, 30 passes, the day's
// guests); a wrong one exits 1.
// Target: p99 < 50 ms per console page.
import http from 'node:http';
import os from 'node:os';
import { startStack } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { browserSignedInAgo } from '../test/console/support/console-session.js';
import { accessToken } from '../test/user-api/user-api-fixtures.js';
import { seal } from '../shared/crypto/sealed-box.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import { dayVisitsQuery, onSiteQuery } from '../console/visitors/visitors-routes.js';
import { percentile } from './percentile.js';
import { integerOption } from './command-line-options.js';
import { runThenExit } from './run-then-exit.js';
import { withServiceNodeFlags } from './service-node-flags.js';

const SMOKE = process.argv.includes('--smoke');
const MEMBERS = integerOption('members', SMOKE ? 2_000 : 200_000);
const PASSES = integerOption('passes', SMOKE ? 10_000 : 1_000_000);
const REQUESTS = integerOption('requests', SMOKE ? 50 : 500);
const HOST_PASSES = Math.min(5_000, Math.floor(PASSES / 2));
const FACILITIES = 20;
const DAYS = 400;
const TARGET_MS = 50;
const CASE_TIME_LIMIT_MS = 30_000;

async function main(): Promise<void> {
  console.log(`starting the stack on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({ label: 'bench_console' });
  const tenant = await stack.seed.tenant({ scopes: ['org:members:read', 'org:members:contact:read', 'org:passes:read'] });
  const orgId = tenant.orgId;
  const host = await stack.seed.user(orgId, { roles: ['admin', 'self_invite'], firstName: 'Hana', lastName: 'Host' });
  const client = await stack.seed.client(orgId);
  const facilityIds = [tenant.facilityId];
  for (let i = 1; i < FACILITIES; i++) facilityIds.push(await stack.seed.facility(orgId, { name: `Site ${i}` }));
  const tableOf = async (name: string) => ((await stack.db('projection_checkpoints').where({ name }).first('table_name')) as { table_name: string }).table_name;
  const [members, counts, passList, batches, visits] = (await Promise.all(
    [READ_MODELS.memberDirectory, READ_MODELS.memberCounts, READ_MODELS.passList, READ_MODELS.passBatches, READ_MODELS.frontDeskVisits].map(tableOf),
  )) as [string, string, string, string, string];
  const today = new Date().toISOString().slice(0, 10);
  const chunk = 50_000;
  const seeded = performance.now();

  console.log(`seeding ${MEMBERS.toLocaleString('en')} members by bulk INSERT into ${members} ...`);
  const key = await stack.deps.subjectKeys.create('bench-console-contacts');
  const boxes = Array.from({ length: 1000 }, (_, i) => seal(key, { email: `member${i}@bench.example`, phone: null }));
  for (let from = 1; from <= MEMBERS; from += chunk) {
    const to = Math.min(MEMBERS, from + chunk - 1);
    await stack.db.raw(
      `INSERT INTO ?? (member_id, org_id, first_name, last_name, name, job_title, department, status, created_at, contact, email_hash, phone_hash, _commit, _prepare)
       SELECT 'emp_' || md5('m' || n), ?, f.name, l.name, f.name || ' ' || l.name, 'Engineer', 'R&D', 'active',
              now() - n * interval '1 minute', (?::jsonb) -> (n % 1000), encode(sha256(('e' || n)::bytea), 'hex'), NULL, 0, 0
       FROM generate_series(?::int, ?::int) AS n
       CROSS JOIN LATERAL (SELECT (ARRAY['Ann','Bob','Chen','Dana','Emil','Fatima','Goran','Hana','Ivan','Jun'])[1 + n % 10] AS name) f
       CROSS JOIN LATERAL (SELECT (ARRAY['Smith','Garcia','Müller','Okafor','Tanaka','Novak','Silva','Kowalski','Haddad','Larsen','Quispe'])[1 + n % 11] AS name) l`,
      [members, orgId, JSON.stringify(boxes), from, to],
    );
  }
  // One member with a name no other has, in the middle of the list: the search's answer.
  await stack.db.raw(
    `INSERT INTO ?? (member_id, org_id, first_name, last_name, name, status, created_at, contact, _commit, _prepare)
     VALUES (?, ?, 'Nadia', 'Needle', 'Nadia Needle', 'active', now() - ? * interval '1 minute', NULL, 0, 0)`,
    [members, `emp_${'e'.repeat(32)}`, orgId, Math.floor(MEMBERS / 2) + 0.5],
  );
  await stack.db.raw(`INSERT INTO ?? (org_id, active, inactive, _commit, _prepare) VALUES (?, ?, 0, 0, 0) ON CONFLICT (org_id) DO UPDATE SET active = EXCLUDED.active`, [counts, orgId, MEMBERS + 1]);

  console.log(`seeding ${PASSES.toLocaleString('en')} passes (${HOST_PASSES.toLocaleString('en')} the host's) into ${passList} and ${visits} ...`);
  const facilitiesSql = `ARRAY[${facilityIds.join(',')}]::bigint[]`;
  for (let from = 1; from <= PASSES; from += chunk) {
    const to = Math.min(PASSES, from + chunk - 1);
    // Pass n: the host's when n <= HOST_PASSES, else one of 50 other users; facility n % 20; arrival
    // day (n / 20) % 400 days around today (so each facility has about PASSES / 8,000 guests a day);
    // created one second apart, newest first; ids far above the stack's own.
    const rows = `FROM generate_series(?::int, ?::int) AS n
       CROSS JOIN LATERAL (SELECT CASE WHEN n <= ? THEN ? ELSE 1000000 + n % 50 END AS creator,
                                  (${facilitiesSql})[1 + n % ${FACILITIES}] AS facility,
                                  to_char(?::date + ((n / ${FACILITIES}) % ${DAYS} - ${DAYS / 2}), 'YYYY-MM-DD') AS day,
                                  'Guest' || n AS first, (ARRAY['Smith','Garcia','Tanaka','Novak'])[1 + n % 4] AS last) g`;
    await stack.db.raw(
      `INSERT INTO ?? (pass_id, public_id, org_id, facility_id, created_by, batch_id, stream_name, status, first_name, last_name, email, phone,
                       arrival_date, arrival_time, valid_from, valid_until, qr_hash, created_at, search_text, _commit, _prepare)
       SELECT 10000000 + n, 'gst_' || md5('p' || n), ?, g.facility, g.creator, 'b' || n, 'guest-invites-bench', 'expected', g.first, g.last,
              'guest' || n || '@bench.example', NULL, g.day, '09:00', now(), now() + interval '1 day', md5('q' || n),
              now() - n * interval '1 second', lower(g.first || ' ' || g.last), 0, 0
       ${rows}`,
      [passList, orgId, from, to, HOST_PASSES, host.userId, today],
    );
    await stack.db.raw(
      `INSERT INTO ?? (pass_id, public_id, org_id, facility_id, created_by, arrival_date, arrival_time, first_name, last_name, cancelled, checked_in_at, checked_out_at, _commit, _prepare)
       SELECT 10000000 + n, 'gst_' || md5('p' || n), ?, g.facility, g.creator, g.day, to_char(time '08:00' + (n % 600) * interval '1 minute', 'HH24:MI'),
              g.first, g.last, false,
              -- Guests of past days came and left; of today, a third expected, a third on site, a third left; of later days none came yet.
              CASE WHEN g.day < ?::text OR (g.day = ?::text AND n % 3 > 0) THEN now() - interval '2 hours' END,
              CASE WHEN g.day < ?::text OR (g.day = ?::text AND n % 3 = 2) THEN now() - interval '1 hour' END, 0, 0
       ${rows}`,
      [visits, orgId, today, today, today, today, from, to, HOST_PASSES, host.userId, today],
    );
  }
  await stack.db.raw(
    `INSERT INTO ?? (batch_id, link_hash, org_id, facility_id, created_by, batch_size, stream_name, stream_revision, arrival_date, arrival_time,
                     valid_from, valid_until, created_at, email_delivery, sms_delivery, _commit, _prepare)
     SELECT batch_id, md5('l' || pass_id), org_id, facility_id, created_by, 1, stream_name, 0, arrival_date, arrival_time, valid_from, valid_until, created_at, 'sent', NULL, 0, 0
     FROM ?? WHERE org_id = ? AND created_by = ?`,
    [batches, passList, orgId, host.userId],
  );
  for (const table of [members, passList, visits, batches]) await stack.db.raw('VACUUM ANALYZE ??', [table]);
  console.log(`seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

  // The answers every request must give.
  const deskFacility = facilityIds[7 % FACILITIES]!;
  const deskRows = (await dayVisitsQuery(stack.db, orgId, deskFacility, today)) as unknown[];
  const newestHostPass = (await stack.db(passList).where({ org_id: orgId, created_by: host.userId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'pass_id', order: 'desc' }]).first('first_name')) as { first_name: string };

  const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
  const cookie = browser.jar.header()!;
  const token = await accessToken(stack, { userId: host.userId, clientId: client.clientId, scopes: ['passes:read'] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(new URL(path, stack.baseUrl), { agent, headers: { Accept: 'text/html', ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
  // Members named "Dana Okafor": n = 3 (mod 110).
  const danaOkafor = Math.min(30, Math.floor((MEMBERS - 3) / 110) + 1);
  const rowsIn = (text: string, id: string) => {
    const at = text.indexOf(`<table id="${id}">`);
    return at === -1 ? 0 : (text.slice(at, text.indexOf('</table>', at)).match(/<tr>/g)?.length ?? 1) - 1;
  };

  type Answer = { status: number; text: string };
  const cases: Array<{ name: string; path: string; headers: Record<string, string>; check: (r: Answer) => string | null; fetch?: () => Promise<Answer> }> = [
    {
      name: 'console: members, search "needle"',
      path: '/settings/members?search=needle',
      headers: { Cookie: cookie },
      check: (r) => (r.status === 200 && r.text.includes('Nadia Needle') && rowsIn(r.text, 'members') === 1 ? null : `status ${r.status}, needle ${r.text.includes('Nadia Needle')}`),
    },
    {
      name: 'API: GET /api/v1/org/members?search=needle',
      path: '/api/v1/org/members?search=needle',
      headers: { Authorization: `Bearer ${tenant.apiKey}` },
      check: (r) => (r.status === 200 && (JSON.parse(r.text) as { items: Array<{ name: string }> }).items.map((i) => i.name).join() === 'Nadia Needle' ? null : `status ${r.status}`),
    },
    {
      name: 'console: members, search "dana okafor"',
      path: '/settings/members?search=dana+okafor',
      headers: { Cookie: cookie },
      check: (r) => (r.status === 200 && rowsIn(r.text, 'members') === danaOkafor ? null : `status ${r.status}, ${rowsIn(r.text, 'members')} rows`),
    },
    {
      name: 'API: GET /api/v1/org/members?search=dana okafor',
      path: '/api/v1/org/members?search=dana%20okafor',
      headers: { Authorization: `Bearer ${tenant.apiKey}` },
      check: (r) => (r.status === 200 && (JSON.parse(r.text) as { items: unknown[] }).items.length === danaOkafor ? null : `status ${r.status}`),
    },
    {
      name: "console: the host's passes",
      path: '/passes',
      headers: { Cookie: cookie },
      check: (r) => (r.status === 200 && rowsIn(r.text, 'passes') === 30 && r.text.includes(newestHostPass.first_name) ? null : `status ${r.status}, ${rowsIn(r.text, 'passes')} rows`),
    },
    {
      name: 'API: GET /api/v1/passes (the host)',
      path: '/api/v1/passes',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      check: (r) => (r.status === 200 && (JSON.parse(r.text) as { items: Array<{ first_name: string }> }).items[0]?.first_name === newestHostPass.first_name ? null : `status ${r.status}`),
    },
    {
      name: 'console: the front desk',
      path: `/visitors?facility=${deskFacility}`,
      headers: { Cookie: cookie },
      check: (r) => {
        if (r.status !== 200) return `status ${r.status}`;
        const shown = rowsIn(r.text, 'expected') + rowsIn(r.text, 'left');
        const expectedShown = deskRows.length - (deskRows as Array<{ checked_in_at: unknown; checked_out_at: unknown }>).filter((x) => x.checked_in_at !== null && x.checked_out_at === null).length;
        return shown === expectedShown ? null : `${shown} expected or left shown, ${expectedShown} in the read model`;
      },
    },
    {
      // No API reads the desk's rows: its two queries alone, in this process, are its floor.
      name: "SQL: the front desk's two queries",
      path: '',
      headers: {},
      fetch: async () => {
        const [day, onSite] = (await Promise.all([dayVisitsQuery(stack.db, orgId, deskFacility, today), onSiteQuery(stack.db, orgId, deskFacility)])) as [unknown[], unknown[]];
        return { status: 200, text: JSON.stringify([day.length, onSite.length]) };
      },
      check: (r) => (JSON.parse(r.text)[0] === deskRows.length ? null : `${r.text} rows`),
    },
  ];

  async function measure(call: () => Promise<void>): Promise<number[]> {
    for (let i = 0; i < 10; i++) await call();
    const latencies: number[] = [];
    const until = performance.now() + CASE_TIME_LIMIT_MS;
    for (let i = 0; i < REQUESTS && performance.now() < until; i++) {
      const started = performance.now();
      await call();
      latencies.push(performance.now() - started);
    }
    return latencies.sort((a, b) => a - b);
  }

  console.log('');
  console.log(`${MEMBERS.toLocaleString('en')} members, ${PASSES.toLocaleString('en')} passes in one organization; one request at a time, up to ${REQUESTS} per case${SMOKE ? ' (smoke)' : ''}`);
  const ms = (v: number) => `${v.toFixed(2)}ms`.padStart(9);
  console.log(`  ${'case'.padEnd(48)} ${'p50'.padStart(9)} ${'p95'.padStart(9)} ${'p99'.padStart(9)}`);
  let wrong = 0;
  let missed = 0;
  for (const c of cases) {
    let problem: string | null = null;
    const latencies = await measure(async () => {
      const answer = c.check(await (c.fetch ? c.fetch() : get(c.path, c.headers)));
      problem ??= answer;
    });
    const p99 = percentile(latencies, 99);
    const target = c.name.startsWith('console') ? (p99 < TARGET_MS ? `  < ${TARGET_MS} ms met` : `  < ${TARGET_MS} ms NOT met`) : '';
    if (c.name.startsWith('console') && p99 >= TARGET_MS) missed++;
    console.log(`  ${c.name.padEnd(48)} ${ms(percentile(latencies, 50))} ${ms(percentile(latencies, 95))} ${ms(p99)}${target}${problem === null ? '' : `  WRONG ANSWER: ${problem}`}`);
    if (problem !== null) wrong++;
  }
  console.log(`  the front desk's day at facility ${deskFacility}: ${deskRows.length} guests`);
  console.log(`  overall: ${wrong === 0 ? 'every answer right' : `${wrong} case(s) answered wrong`}; ${missed === 0 ? 'every console page met' : `${missed} console page(s) missed`} p99 < ${TARGET_MS} ms`);
  console.log(`  machine       ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);
  if (wrong > 0) process.exitCode = 1;

  agent.destroy();
  await stack.stop();
  await stopTestDatabases();
}

withServiceNodeFlags();
runThenExit(main);
