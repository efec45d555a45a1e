// Member directory at scale: `npx tsx bench/member-directory.ts [--members 200000] [--requests 1000]`.
// Runs the real stack in-process (embedded PostgreSQL, or DATABASE_URL's server), then seeds ONE
// organization with `members` members by bulk SQL INSERT straight into the member_directory
// generation table (and member_counts), not through events: this measures the read path only.
// Contacts are real sealed boxes, made under a few subject keys (a thousand distinct boxes shared
// round-robin); one member carries the real keyed hash of a known email. Then, one request at a
// time over HTTP: the first page, a name search, an email search and a page of 100 with contact
// fields, each beside the bare SQL query that serves it, timed in the same run (the floor).
// Targets (p99): first page < 10 ms, name search < 20 ms, email search < 10 ms, contact page < 25 ms.
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { startStack } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { testDataKeyRing } from '../test/support/data-kek.js';
import { seal } from '../shared/crypto/sealed-box.js';
import { loadContactHasher } from '../shared/crypto/postgres-contact-search-key.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import { memberPageQuery, memberSearch, type MemberPageOptions } from '../query-service/members/list-members.js';
import { BASIC_MEMBER_FIELDS, MEMBER_FIELDS } from '../query-service/members/member-fields.js';
import { percentile } from './percentile.js';
import { integerOption } from './command-line-options.js';
import { runThenExit } from './run-then-exit.js';
import { withServiceNodeFlags } from './service-node-flags.js';

const MEMBERS = integerOption('members', 200_000);
const REQUESTS = integerOption('requests', 1000);
const CASE_TIME_LIMIT_MS = 30_000;
const SEALING_KEYS = 4;
const DISTINCT_BOXES = 1000;
const TARGET_EMAIL = 'needle.member@bench.example';

async function main(): Promise<void> {
  console.log(`starting the stack on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({ label: 'bench_members' });
  const tenant = await stack.seed.tenant({ scopes: ['org:members:read'] });
  const contactKey = await stack.seed.apiKey(tenant.orgId, tenant.userId, { scopes: ['org:members:read', 'org:members:contact:read'] });
  const hasher = await loadContactHasher(stack.db, testDataKeyRing());
  const checkpoint = (name: string) => stack.db('projection_checkpoints').where({ name }).first('table_name');
  const { table_name: table } = await checkpoint(READ_MODELS.memberDirectory);
  const { table_name: countsTable } = await checkpoint(READ_MODELS.memberCounts);

  console.log(`seeding ${MEMBERS.toLocaleString('en')} members by bulk INSERT into ${table} (not through events) ...`);
  const seeded = performance.now();
  const keys = await Promise.all(Array.from({ length: SEALING_KEYS }, (_, i) => stack.deps.subjectKeys.create(`bench-member-contacts-${i}`)));
  const boxes = Array.from({ length: DISTINCT_BOXES }, (_, i) =>
    seal(keys[i % SEALING_KEYS]!, { email: `member${i}@bench.example`, phone: `+49 30 ${String(1_000_000 + i)}` }),
  );
  const chunk = 50_000;
  for (let from = 1; from <= MEMBERS; from += chunk) {
    const to = Math.min(MEMBERS, from + chunk - 1);
    // Names from small pools (some terms frequent, whole names 1 in 110); one member a minute back
    // in time; hashes of the right form (64 hex digits), unique per member; 1 in 20 inactive.
    await stack.db.raw(
      `INSERT INTO ?? (member_id, org_id, user_id, first_name, last_name, name, job_title, department, external_id, status,
                       created_at, contact, email_hash, phone_hash, _commit, _prepare)
       SELECT 'emp_' || md5('m' || n), ?, NULL, f.name, l.name, f.name || ' ' || l.name, 'Engineer', 'R&D', 'HR-' || n,
              CASE WHEN n % 20 = 0 THEN 'inactive' ELSE 'active' END,
              now() - n * interval '1 minute', (?::jsonb) -> (n % ?), encode(sha256(('e' || n)::bytea), 'hex'),
              encode(sha256(('p' || n)::bytea), 'hex'), 0, 0
       FROM generate_series(?::int, ?::int) AS n
       CROSS JOIN LATERAL (SELECT (ARRAY['Ann','Bob','Chen','Dana','Emil','Fatima','Goran','Hana','Ivan','Jun'])[1 + n % 10] AS name) f
       CROSS JOIN LATERAL (SELECT (ARRAY['Smith','Garcia','Müller','Okafor','Tanaka','Novak','Silva','Kowalski','Haddad','Larsen','Quispe'])[1 + n % 11] AS name) l`,
      [table, tenant.orgId, JSON.stringify(boxes), DISTINCT_BOXES, from, to],
    );
    process.stdout.write(`  ${to.toLocaleString('en')}\r`);
  }
  // One member in the middle of the list carries the real hash of a known email.
  const needle = `emp_${'e'.repeat(32)}`;
  await stack.db(table).where({ member_id: needle }).del();
  await stack.db.raw(
    `INSERT INTO ?? (member_id, org_id, first_name, last_name, name, status, created_at, contact, email_hash, _commit, _prepare)
     VALUES (?, ?, 'Nadia', 'Needle', 'Nadia Needle', 'active', now() - ? * interval '1 minute', ?::jsonb, ?, 0, 0)`,
    [table, needle, tenant.orgId, Math.floor(MEMBERS / 2) + 0.5, JSON.stringify(seal(keys[0]!, { email: TARGET_EMAIL, phone: null })), hasher.hash('email', TARGET_EMAIL)],
  );
  const inactive = Math.floor(MEMBERS / 20);
  await stack.db.raw(
    `INSERT INTO ?? (org_id, active, inactive, _commit, _prepare) VALUES (?, ?, ?, 0, 0)
     ON CONFLICT (org_id) DO UPDATE SET active = EXCLUDED.active, inactive = EXCLUDED.inactive`,
    [countsTable, tenant.orgId, MEMBERS - inactive + 1, inactive],
  );
  await stack.db.raw('VACUUM ANALYZE ??', [table]);
  await stack.db.raw('CHECKPOINT');
  console.log(`seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

  const sql = (options: Omit<MemberPageOptions, 'orgId' | 'after'>) => {
    const native = memberPageQuery(stack.db, { ...options, orgId: tenant.orgId, after: null }).toSQL().toNative();
    return { text: native.sql, values: native.bindings as unknown[] };
  };
  const basic = [...BASIC_MEMBER_FIELDS];
  const contactFields = ['id', 'name', 'email', 'phone'] as const;
  const cases: Array<{ name: string; query: string; apiKey: string; target: number; floor: { text: string; values: unknown[] } }> = [
    { name: 'first page (limit 30, basic)', query: '?limit=30', apiKey: tenant.apiKey, target: 10, floor: sql({ status: 'active', limit: 30, search: null, fields: basic }) },
    {
      name: 'name search "ann" (1 in 10)',
      query: '?limit=30&search=ann',
      apiKey: tenant.apiKey,
      target: 20,
      floor: sql({ status: 'active', limit: 30, search: memberSearch('ann', 'basic', hasher), fields: basic }),
    },
    {
      name: 'name search "dana okafor" (1 in 110)',
      query: `?limit=30&search=${encodeURIComponent('Dana Okafor')}`,
      apiKey: tenant.apiKey,
      target: 20,
      floor: sql({ status: 'active', limit: 30, search: memberSearch('dana okafor', 'basic', hasher), fields: basic }),
    },
    {
      name: 'name search "needle" (1 member)',
      query: '?limit=30&search=needle',
      apiKey: tenant.apiKey,
      target: 20,
      floor: sql({ status: 'active', limit: 30, search: memberSearch('needle', 'basic', hasher), fields: basic }),
    },
    {
      name: 'email search (contact tier, 1 member)',
      query: `?limit=30&search=${encodeURIComponent(TARGET_EMAIL)}`,
      apiKey: contactKey.apiKey,
      target: 10,
      floor: sql({ status: 'active', limit: 30, search: memberSearch(TARGET_EMAIL, 'contact', hasher), fields: [...MEMBER_FIELDS] }),
    },
    {
      name: 'page of 100 with email, phone',
      query: `?limit=100&fields=${contactFields.join(',')}`,
      apiKey: contactKey.apiKey,
      target: 25,
      floor: sql({ status: 'active', limit: 100, search: null, fields: [...contactFields] }),
    },
  ];

  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (query: string, apiKey: string) =>
    new Promise<{ status: number; items: number }>((resolve, reject) => {
      const req = http.request(new URL(`/api/v1/org/members${query}`, stack.baseUrl), { agent, headers: { Authorization: `Bearer ${apiKey}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, items: res.statusCode === 200 ? (JSON.parse(text) as { items: unknown[] }).items.length : 0 }));
      });
      req.on('error', reject);
      req.end();
    });
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();

  /** Sorted latencies of `times` calls (after a warm-up), within the case's time limit. */
  async function measure(call: () => Promise<unknown>): Promise<number[]> {
    for (let i = 0; i < 20; i++) await call();
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
  console.log(`GET /api/v1/org/members, ${MEMBERS.toLocaleString('en')} members in one organization, one request at a time, ${REQUESTS} requests per case`);
  const ms = (v: number) => `${v.toFixed(2)}ms`.padStart(8);
  console.log(`  ${'case'.padEnd(40)} ${'items'.padStart(5)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'p99'.padStart(8)}   SQL floor p50 / p99   target p99`);
  let allMet = true;
  for (const c of cases) {
    let items = 0;
    const http = await measure(async () => {
      const res = await get(c.query, c.apiKey);
      if (res.status !== 200) throw new Error(`${c.name}: status ${res.status}`);
      items = res.items;
    });
    const floor = await measure(() => client.query(c.floor.text, c.floor.values));
    const p99 = percentile(http, 99);
    allMet &&= p99 < c.target;
    console.log(
      `  ${c.name.padEnd(40)} ${String(items).padStart(5)} ${ms(percentile(http, 50))} ${ms(percentile(http, 95))} ${ms(p99)}   ${ms(percentile(floor, 50))} / ${ms(percentile(floor, 99))}   < ${c.target} ms ${p99 < c.target ? 'met' : 'NOT met'}`,
    );
  }
  console.log(`  overall: ${allMet ? 'every case met' : 'NOT every case met'} its p99 target`);
  console.log(`  machine       ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);

  await client.end();
  agent.destroy();
  await stack.stop();
  await stopTestDatabases();
}

withServiceNodeFlags();
runThenExit(main);
