import { expect } from 'chai';
import { pino } from 'pino';
import type { Knex } from 'knex';
import { ProjectionRunner } from '../../projections/runner.js';
import type { ProjectionDeps } from '../../projections/projection-deps.js';
import { HOT_ROWS_PAGES, RebuildStopped, rebuildProjection, rebuildProjections, type RebuildResult } from '../../projections/rebuild.js';
import { projectionStatus, formatStatus, statusToJson } from '../../projections/status.js';
import { PostgresReadModelWatermark } from '../../projections/watermark.js';
import { ALL_PROJECTIONS } from '../../projections/all-projections.js';
import { passListProjection } from '../../projections/pass-list-projection.js';
import { PAGE_WRITER_APPLICATION_NAME } from '../../projections/page-writer.js';
import { ProjectionWriteError } from '../../projections/table-writer.js';
import type { Projection } from '../../projections/projection.js';
import { createKnex } from '../../shared/db/knex.js';
import { createLogger, type Logger } from '../../shared/logger.js';
import { comparePositions, START, type Position, type ReadAllOptions } from '../../shared/event-store/event-store.js';
import { MONTH, openTestDb, visibleLog, waitForCheckpoints, type TestDb } from './log-writer.js';

const silent = createLogger('silent');

function depsOf(db: TestDb, logger: Logger = silent): ProjectionDeps {
  return { knex: db.knex, store: db.store, subjectKeys: db.subjectKeys, logger };
}

async function count(knex: Knex, sql: string, bindings: readonly Knex.RawBinding[] = []): Promise<number> {
  const { rows } = await knex.raw<{ rows: Array<{ n: string | number }> }>(sql, bindings);
  return Number(rows[0]!.n);
}

async function checkpoints(knex: Knex) {
  const { rows } = await knex.raw<{ rows: Array<{ name: string; generation: number; table_name: string; version: number; c: string; p: string; error: string | null }> }>(
    'SELECT name, generation, table_name, version, position_commit::text AS c, position_prepare::text AS p, error FROM projection_checkpoints ORDER BY name',
  );
  return rows.map((r) => ({ ...r, position: { commit: BigInt(r.c), prepare: BigInt(r.p) } as Position }));
}

/** Every counter and row count the log implies, compared with the read models. */
async function expectExact(knex: Knex, expected: { passes: number; revoked: number; perOrg: Record<number, number> }) {
  expect(await count(knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(expected.passes);
  expect(await count(knex, "SELECT count(*) AS n FROM pass_list WHERE status = 'cancelled'")).to.equal(expected.revoked);
  for (const [orgId, n] of Object.entries(expected.perOrg)) {
    expect(await count(knex, 'SELECT pass_count AS n FROM organizations WHERE org_id = ?', [Number(orgId)]), `pass_count of org ${orgId}`).to.equal(n);
    expect(await count(knex, 'SELECT used AS n FROM invite_allowance_usage WHERE usage_key = ?', [`${Number(orgId) * 100}:${MONTH}`]), `usage of org ${orgId}`).to.equal(n);
  }
}

/** A test projection of one column, the id of each created pass; `overrides` make it fail. */
function passIdProjection(name: string, overrides: Partial<Projection<{ pass_id: number }>>): Projection<{ pass_id: number }> {
  return {
    name,
    version: 1,
    handles: ['PassCreated'],
    keyColumn: 'pass_id',
    keyOf: (e) => (e.type === 'PassCreated' ? e.data.passId : null),
    apply: (_row, e) => (e.type === 'PassCreated' ? { pass_id: e.data.passId } : undefined),
    createTable: async (knex, table) => {
      await knex.raw('CREATE TABLE ?? (pass_id bigint PRIMARY KEY)', [table]);
    },
    ...overrides,
  };
}

/** `brittle`: pass ids, in a table whose check constraint refuses pass 3. */
function brittleProjection(): Projection<{ pass_id: number }> {
  return passIdProjection('brittle', {
    createTable: async (knex, table) => {
      await knex.raw('CREATE TABLE ?? (pass_id bigint PRIMARY KEY CHECK (pass_id <> 3))', [table]);
    },
  });
}

describe('projection runner (real PostgreSQL event store)', function () {
  this.timeout(60_000);
  let db: TestDb;
  const runners: ProjectionRunner[] = [];
  const started = async (runner: ProjectionRunner) => {
    runners.push(runner);
    await runner.start();
    return runner;
  };

  beforeEach(async function () {
    db = await openTestDb(this.currentTest?.title.slice(0, 20) ?? 'runner');
  });

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await db.close();
  });

  it('projects every read model through its view and moves each checkpoint to the head', async () => {
    await db.log.organization(1);
    await db.log.apiKey(1, 'key-1');
    const { passIds } = await db.log.passes(1, 3, { guest: { firstName: 'Émile', email: 'Emile@Example.ORG', phone: '+331234567' } });
    await db.log.passes(1, 1);
    await db.log.revoke(1, passIds[1]!);
    await db.log.append('facility-10', [{ type: 'FacilitySuspended', data: { facilityId: 10, orgId: 1 } }]);
    await started(new ProjectionRunner(depsOf(db), { batchSize: 3 }));
    await waitForCheckpoints(db.knex, db.log.last);

    const passes = (await db.knex.raw('SELECT * FROM pass_list ORDER BY pass_id')).rows;
    expect(passes).to.have.length(4);
    expect(passes[0]).to.include({ first_name: 'Émile', email: 'Emile@Example.ORG', status: 'expected', org_id: 1, created_by: 100 });
    expect(passes[0].search_text).to.equal(`émile hopper1 emile@example.org +331234567`);
    expect(passes[0].stream_name).to.equal(`guest-invites-100-${MONTH}`);
    expect(passes[1].status).to.equal('cancelled');
    expect(Object.keys(passes[0])).to.not.include('_commit'); // the runner's columns stay behind the view
    await expectExact(db.knex, { passes: 4, revoked: 1, perOrg: { 1: 4 } });
    expect((await db.knex.raw('SELECT * FROM facilities')).rows[0]).to.include({ facility_id: 10, suspended: true, is_active: true });
    expect((await db.knex.raw('SELECT roles FROM users WHERE user_id = 100')).rows[0].roles).to.deep.equal(['admin', 'self_invite']);
    expect((await db.knex.raw('SELECT * FROM api_keys')).rows[0]).to.include({ key_id: 'key-1', revoked: false });

    const head = await db.store.headPosition();
    for (const cp of await checkpoints(db.knex)) {
      expect(comparePositions(cp.position, head), cp.name).to.equal(0);
      expect(cp).to.include({ generation: 1, table_name: `${cp.name}_g1`, error: null });
    }
    // Keyset and search indexes exist on the generation table.
    const indexes = (await db.knex.raw("SELECT indexname FROM pg_indexes WHERE tablename = 'pass_list_g1'")).rows.map((r: { indexname: string }) => r.indexname);
    expect(indexes).to.include.members([
      'pass_list_g1_pkey',
      'pass_list_g1_public_id_key',
      'pass_list_g1_org_created_idx',
      'pass_list_g1_org_creator_created_idx',
      'pass_list_g1_search_trgm_idx',
    ]);
  });

  it('moves past events no projection handles without committing, and stores them with the next committed batch', async () => {
    await db.log.organization(1);
    const runner = await started(new ProjectionRunner(depsOf(db), { irrelevantCheckpointIntervalMs: 600_000 }));
    await waitForCheckpoints(db.knex, db.log.last);
    const stored = await checkpoints(db.knex);

    // Consents change no read model: the runner follows them in memory only.
    for (let userId = 1; userId <= 5; userId++) {
      await db.log.append(`oauth-consents-${userId}`, [
        { type: 'OAuthConsentGranted', data: { userId, clientId: `svc_${'a'.repeat(32)}`, scopes: ['openid'] } },
      ]);
    }
    const consents = db.log.last;
    const deadline = Date.now() + 10_000;
    while (!runner.status().every((t) => comparePositions(t.position, consents) >= 0)) {
      if (Date.now() > deadline) throw new Error('the runner never followed the consents');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await checkpoints(db.knex)).map((c) => c.position), 'no transaction for them').to.deep.equal(stored.map((c) => c.position));

    // The next batch that changes rows stores every checkpoint past both, and nothing is lost.
    await db.log.passes(1, 2);
    await waitForCheckpoints(db.knex, db.log.last);
    await expectExact(db.knex, { passes: 2, revoked: 0, perOrg: { 1: 2 } });
  });

  it('stores no names or contact for a guest whose key was destroyed', async () => {
    await db.log.organization(1);
    const { batchId } = await db.log.passes(1, 2);
    await db.subjectKeys.destroy(batchId);
    await started(new ProjectionRunner(depsOf(db)));
    await waitForCheckpoints(db.knex, db.log.last);
    const rows = (await db.knex.raw('SELECT first_name, last_name, email, phone, search_text FROM pass_list')).rows;
    expect(rows).to.deep.equal([
      { first_name: null, last_name: null, email: null, phone: null, search_text: '' },
      { first_name: null, last_name: null, email: null, phone: null, search_text: '' },
    ]);
  });

  it('recovers from a crash in the middle of a batch: every event applied exactly once', async () => {
    for (const org of [1, 2, 3]) await db.log.organization(org);
    for (let i = 0; i < 60; i++) await db.log.passes((i % 3) + 1, 1 + (i % 4)); // 150 passes
    await db.log.revoke(1, 1);
    const perOrg = { 1: 0, 2: 0, 3: 0 } as Record<number, number>;
    for (let i = 0; i < 60; i++) perOrg[(i % 3) + 1]! += 1 + (i % 4);

    // The first runner's connection is killed inside the transaction of its 4th batch, just
    // before COMMIT, as if the process died there; it then waits (long backoff) until stopped.
    let crashed = false;
    const first = await started(
      new ProjectionRunner(depsOf(db), {
        batchSize: 20,
        retry: { initialMs: 60_000 },
        beforeCommit: async (batch, client) => {
          if (batch.number !== 4) return;
          crashed = true;
          await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
        },
      }),
    );
    const deadline = Date.now() + 10_000;
    while (!crashed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(crashed).to.equal(true);
    await first.stop();

    // Rows and checkpoints are those of the three committed batches, nothing of the fourth.
    const afterCrash = await checkpoints(db.knex);
    const committed = await db.store.readAll({ maxCount: 60 });
    for (const cp of afterCrash) expect(comparePositions(cp.position, committed.at(-1)!.position), cp.name).to.equal(0);
    const passesSeen = committed.filter((e) => e.type === 'PassCreated').length;
    expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(passesSeen);
    expect(await count(db.knex, 'SELECT coalesce(sum(pass_count), 0) AS n FROM organizations')).to.equal(passesSeen);
    expect(await count(db.knex, 'SELECT coalesce(sum(used), 0) AS n FROM invite_allowance_usage')).to.equal(passesSeen);

    // A new runner (a restarted process) finishes the log; the counters are exact.
    await started(new ProjectionRunner(depsOf(db), { batchSize: 20 }));
    await waitForCheckpoints(db.knex, db.log.last);
    await expectExact(db.knex, { passes: 150, revoked: 1, perOrg });
  });

  it('applies nothing twice when checkpoints are reset and the log is replayed, nor with two runners at once', async () => {
    for (const org of [1, 2]) await db.log.organization(org);
    for (let i = 0; i < 20; i++) await db.log.passes((i % 2) + 1, 2);
    const runner = await started(new ProjectionRunner(depsOf(db), { batchSize: 7 }));
    await waitForCheckpoints(db.knex, db.log.last);
    await runner.stop();
    const before = (await db.knex.raw('SELECT * FROM organizations ORDER BY org_id')).rows;

    // Replay everything: the rows' own positions make every event a no-op the second time.
    await db.knex.raw('UPDATE projection_checkpoints SET position_commit = 0, position_prepare = 0');
    const twins = [new ProjectionRunner(depsOf(db), { batchSize: 5 }), new ProjectionRunner(depsOf(db), { batchSize: 11 })];
    for (const twin of twins) await started(twin);
    for (let i = 0; i < 10; i++) await db.log.passes((i % 2) + 1, 1);
    await waitForCheckpoints(db.knex, db.log.last);
    await expectExact(db.knex, { passes: 50, revoked: 0, perOrg: { 1: 25, 2: 25 } });
    expect(before.map((r: { pass_count: number }) => r.pass_count)).to.deep.equal([20, 20]);
  });

  it('picks up a checkpoint moved back while it runs (an operator reset) and re-reads from there', async () => {
    await db.log.organization(1);
    await db.log.passes(1, 3);
    await started(new ProjectionRunner(depsOf(db), { batchSize: 2 }));
    await waitForCheckpoints(db.knex, db.log.last);
    await db.knex.raw("UPDATE projection_checkpoints SET position_commit = 0, position_prepare = 0 WHERE name = 'pass_list'");
    await db.knex.raw('DELETE FROM pass_list_g1');
    await db.log.passes(1, 1);
    await waitForCheckpoints(db.knex, db.log.last);
    expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(4);
    await expectExact(db.knex, { passes: 4, revoked: 0, perOrg: { 1: 4 } });
  });

  it('stops a projection loudly at a poison event, with the event id, and keeps the others going', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const fragile = passIdProjection('fragile', {
      apply: (_row, e) => {
        if (e.type === 'PassCreated' && e.data.passId === 3) throw new Error('cannot project pass 3');
        return e.type === 'PassCreated' ? { pass_id: e.data.passId } : undefined;
      },
    });
    await db.log.organization(1);
    await db.log.passes(1, 2);
    await db.log.passes(1, 2);
    const poison = (await visibleLog(db)).find((e) => e.type === 'PassCreated' && (e.data as { passId: number }).passId === 3)!;
    const runner = await started(new ProjectionRunner(depsOf(db, logger), { projections: [...ALL_PROJECTIONS, fragile], batchSize: 100 }));
    await waitForCheckpoints(db.knex, db.log.last, 10_000, ALL_PROJECTIONS.map((p) => p.name));

    expect(runner.status().find((p) => p.name === 'fragile')).to.include({ state: 'failed' });
    const stopped = (await checkpoints(db.knex)).find((c) => c.name === 'fragile')!;
    expect(stopped.error).to.contain(poison.id).and.contain('cannot project pass 3');
    expect(stopped.position).to.deep.equal(START);
    expect(await count(db.knex, 'SELECT count(*) AS n FROM fragile')).to.equal(0); // its batch rolled back whole
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; eventId?: string });
    expect(logged.some((l) => l.level >= 50 && l.eventId === poison.id && /fragile STOPPED/.test(l.msg))).to.equal(true);
    await expectExact(db.knex, { passes: 4, revoked: 0, perOrg: { 1: 4 } });
    const status = await projectionStatus({ knex: db.knex, store: db.store }, { projections: [...ALL_PROJECTIONS, fragile] });
    expect(formatStatus(status)).to.match(/fragile .*STOPPED: projection fragile cannot apply event/);
  });

  it('stops only the projection whose rows the database refuses, naming it, and keeps the others going', async () => {
    const brittle = brittleProjection();
    await db.log.organization(1);
    await db.log.passes(1, 4);
    // Every projection's writes of a batch go out in one query, which cannot say whose statement
    // failed: the retry writes them one by one, and the failure is pinned on `brittle` alone.
    const runner = await started(
      new ProjectionRunner(depsOf(db), { projections: [...ALL_PROJECTIONS, brittle], batchSize: 100, retry: { initialMs: 5, maxMs: 20 } }),
    );
    await waitForCheckpoints(db.knex, db.log.last, 10_000, ALL_PROJECTIONS.map((p) => p.name));

    expect(runner.status().find((p) => p.name === 'brittle')).to.include({ state: 'failed' });
    const stopped = (await checkpoints(db.knex)).find((c) => c.name === 'brittle')!;
    expect(stopped.error).to.match(/^projection brittle failed to write events .*check constraint/);
    expect(stopped.position).to.deep.equal(START);
    expect(await count(db.knex, 'SELECT count(*) AS n FROM brittle')).to.equal(0);
    await expectExact(db.knex, { passes: 4, revoked: 0, perOrg: { 1: 4 } });
  });

  it('stops every projection loudly at an event that no longer reads as valid, naming it', async () => {
    await db.log.organization(1);
    await db.log.passes(1, 1);
    // A stored event its schema rejects (as if written by a buggy release): no projection can pass it.
    const { rows } = await db.knex.raw(
      `INSERT INTO events (stream_name, stream_position, event_id, type, data, metadata)
       SELECT 'organization-1', 1, gen_random_uuid(), 'OrganizationInviteAllowanceChanged', '{"orgId": 1, "inviteAllowance": -5}', metadata
       FROM events WHERE stream_name = 'organization-1' RETURNING event_id::text AS id`,
    );
    const badId = rows[0].id as string;
    await db.log.passes(1, 1);
    // One event per batch: the store validates a batch as a whole before handing it over.
    const runner = await started(new ProjectionRunner(depsOf(db), { batchSize: 1 }));
    const deadline = Date.now() + 10_000;
    while (runner.status().some((p) => p.state !== 'failed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const p of runner.status()) expect(p.state, p.name).to.equal('failed');
    for (const cp of await checkpoints(db.knex)) expect(cp.error, cp.name).to.contain(badId);
    // Everything before the bad event was applied, nothing after it.
    expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(1);
  });

  it('keeps following when the database drops every connection', async () => {
    await db.log.organization(1);
    await db.log.passes(1, 2);
    await started(new ProjectionRunner(depsOf(db), { retry: { initialMs: 20, maxMs: 200 } }));
    await waitForCheckpoints(db.knex, db.log.last);
    const admin = createKnex(db.url, { max: 1 });
    try {
      await admin.raw('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    } finally {
      await admin.destroy();
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await db.log.passes(1, 3); // the writer's pooled connections were cut too
        break;
      } catch (error) {
        if (attempt > 3) throw error;
      }
    }
    await waitForCheckpoints(db.knex, db.log.last, 20_000);
    await expectExact(db.knex, { passes: 5, revoked: 0, perOrg: { 1: 5 } });
  });

  it('reports position and lag per projection', async () => {
    await db.log.organization(1);
    await db.log.passes(1, 3);
    const events = (await visibleLog(db)).length;
    const runner = new ProjectionRunner(depsOf(db));
    await started(runner);
    await waitForCheckpoints(db.knex, db.log.last);
    await runner.stop();
    await db.log.passes(1, 2);
    const report = await projectionStatus({ knex: db.knex, store: db.store });
    expect(report.projections.map((p) => p.name)).to.deep.equal(ALL_PROJECTIONS.map((p) => p.name));
    for (const p of report.projections) {
      const code = ALL_PROJECTIONS.find((c) => c.name === p.name)!;
      expect(p).to.include({ lag: 2, lagCapped: false, generation: 1, version: code.version, codeVersion: code.version, error: null });
    }
    const json = statusToJson(report);
    expect(JSON.parse(JSON.stringify(json))).to.deep.equal(json);
    expect(events).to.equal(8); // 5 of the organization, 3 passes
    expect(formatStatus(report)).to.contain('pass_list').and.contain('catching up');
  });

  describe('blue/green rebuild', () => {
    it('rebuilds every read model while the live runner runs, and queries keep answering throughout', async () => {
      for (const org of [1, 2]) await db.log.organization(org);
      for (let i = 0; i < 40; i++) await db.log.passes((i % 2) + 1, 5); // 200 passes
      await db.log.revoke(2, 2);
      await started(new ProjectionRunner(depsOf(db), { batchSize: 25 }));
      await waitForCheckpoints(db.knex, db.log.last);

      // Writers and readers keep going during the whole rebuild.
      let writing = true;
      let written = 0;
      const writer = (async () => {
        while (writing) {
          await db.log.passes((written % 2) + 1, 1);
          written++;
        }
      })();
      let reading = true;
      const queryErrors: unknown[] = [];
      let queries = 0;
      let lastCount = 0;
      let shrank = false;
      const reader = (async () => {
        const readerKnex = createKnex(db.url, { max: 2 });
        try {
          while (reading) {
            try {
              const n = await count(readerKnex, 'SELECT count(*) AS n FROM pass_list');
              await readerKnex.raw('SELECT org_id, pass_count FROM organizations');
              await readerKnex.raw("SELECT pass_id FROM pass_list WHERE org_id = 1 AND search_text ILIKE '%grace%' ORDER BY created_at DESC, pass_id DESC LIMIT 30");
              if (n < lastCount) shrank = true;
              lastCount = n;
              queries++;
            } catch (error) {
              queryErrors.push(error);
            }
          }
        } finally {
          await readerKnex.destroy();
        }
      })();

      const phases = new Set<string>();
      const result = await rebuildProjections(undefined, depsOf(db), {
        batchSize: 50,
        onProgress: (p) => phases.add(p.phase),
        // Let the live runner and the writer move on between catching up and switching over.
        beforeSwitch: () => new Promise((r) => setTimeout(r, 300)),
      });
      await new Promise((r) => setTimeout(r, 300)); // the live runner goes on in the new tables
      writing = false;
      await writer;
      reading = false;
      await reader;

      expect(queryErrors).to.deep.equal([]);
      expect(queries).to.be.greaterThan(10);
      expect(shrank, 'the pass list never loses rows during the switch').to.equal(false);
      expect([...phases]).to.deep.equal(['replaying', 'indexing', 'switching', 'done']);
      expect(result.projections.map((p) => p.generation)).to.deep.equal(ALL_PROJECTIONS.map(() => 2));
      expect(written).to.be.greaterThan(0);

      await waitForCheckpoints(db.knex, db.log.last);
      const total = 200 + written;
      const perOrg = { 1: 100 + Math.ceil(written / 2), 2: 100 + Math.floor(written / 2) };
      await expectExact(db.knex, { passes: total, revoked: 1, perOrg });
      for (const cp of await checkpoints(db.knex)) expect(cp).to.include({ generation: 2, table_name: `${cp.name}_g2`, error: null });
      const tables = (await db.knex.raw("SELECT tablename FROM pg_tables WHERE tablename ~ '_g[0-9]+$' ORDER BY 1")).rows.map((r: { tablename: string }) => r.tablename);
      expect(tables).to.deep.equal(ALL_PROJECTIONS.map((p) => `${p.name}_g2`).sort());
      expect((await db.knex.raw('SELECT count(*)::int AS n FROM projection_rebuilds')).rows[0].n).to.equal(0);
    });

    it('rebuilds rows identical to the live runner\'s, column for column, awkward text and arrays included', async () => {
      await db.log.organization(1);
      await db.log.organization(2);
      await db.log.apiKey(1, 'key-one');
      const awkward = ['Tab\there', 'Line\nbreak\r\nend', 'Back\\slash \\N', 'Quote " and {braces}, comma', 'NULL', '\\.', 'Zoë 名前 🚪'];
      for (const [i, text] of awkward.entries()) {
        await db.log.passes((i % 2) + 1, 2, { guest: { firstName: text, lastName: `${text} ${i}`, email: null, phone: text } });
      }
      for (let i = 0; i < 20; i++) await db.log.passes(1, 3);
      await db.log.revoke(1, 3);
      await started(new ProjectionRunner(depsOf(db), { batchSize: 7 }));
      await waitForCheckpoints(db.knex, db.log.last);
      const snapshot = async () => {
        const views: Record<string, unknown[]> = {};
        for (const p of ALL_PROJECTIONS) {
          views[p.name] = (await db.knex.raw(`SELECT to_jsonb(v) AS r FROM ?? v ORDER BY ??`, [p.name, p.keyColumn])).rows.map((r: { r: unknown }) => r.r);
        }
        return views;
      };
      const live = await snapshot();
      expect(live.pass_list).to.have.length(awkward.length * 2 + 60);
      expect(live.pass_list!.map((r) => (r as { first_name: string }).first_name)).to.include.members(awkward);

      await rebuildProjections(undefined, depsOf(db), { batchSize: 9 });
      expect(await snapshot()).to.deep.equal(live);
    });

    it('keeps following after a rebuild switched away from, and dropped, the table it wrote last while it was idle', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 3; i++) await db.log.passes(1, 2);
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);
      await rebuildProjection('pass_list', depsOf(db)); // drops pass_list_g1, where the idle runner wrote last
      expect(await count(db.knex, "SELECT count(*) AS n FROM pg_tables WHERE tablename = 'pass_list_g1'")).to.equal(0);

      await db.log.passes(1, 2);
      await waitForCheckpoints(db.knex, db.log.last, 10_000);
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(8);
    });

    it('projects guest text PostgreSQL cannot store (sealed before requests were checked) as U+FFFD, live and rebuilt', async () => {
      await db.log.organization(1);
      await db.log.passes(1, 2, { guest: { firstName: 'Nul\u0000Byte', lastName: 'Lone \ud800 high', email: null, phone: '\udc00+1 555' } });
      await db.log.passes(1, 1, { guest: { firstName: 'Paired 🚪', lastName: null, email: null, phone: null } });
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last, 10_000);
      const names = async () =>
        (await db.knex.raw('SELECT first_name, last_name, phone, search_text FROM pass_list ORDER BY pass_id')).rows as Array<Record<string, string | null>>;
      const expected = [
        { first_name: 'Nul\ufffdByte', last_name: 'Lone \ufffd high', phone: '\ufffd+1 555', search_text: 'nul\ufffdbyte lone \ufffd high \ufffd+1 555' },
        { first_name: 'Nul\ufffdByte', last_name: 'Lone \ufffd high', phone: '\ufffd+1 555', search_text: 'nul\ufffdbyte lone \ufffd high \ufffd+1 555' },
        { first_name: 'Paired 🚪', last_name: null, phone: null, search_text: 'paired 🚪' },
      ];
      expect(await names()).to.deep.equal(expected);
      expect((await checkpoints(db.knex)).map((c) => c.error)).to.deep.equal(ALL_PROJECTIONS.map(() => null));
      await rebuildProjection('pass_list', depsOf(db));
      expect(await names()).to.deep.equal(expected);
    });

    it('resumes an interrupted rebuild from its own checkpoint', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 30; i++) await db.log.passes(1, 2);
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);

      await interruptedPassListRebuild();
      const status = await projectionStatus({ knex: db.knex, store: db.store });
      const pending = status.projections.find((p) => p.name === 'pass_list')!.rebuild;
      expect(pending).to.include({ generation: 2, tableName: 'pass_list_g2' });
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list_g2')).to.equal(5); // first page: 5 organization events, 5 passes

      let events = 0;
      const result = await rebuildProjection('pass_list', depsOf(db), { batchSize: 10, onProgress: (p) => (events = p.events) });
      expect(result.projections[0]).to.include({ generation: 2, tableName: 'pass_list_g2' });
      expect(events).to.equal((await visibleLog(db)).length - 10); // the resumed replay skipped the first page
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(60);
      expect((await checkpoints(db.knex)).find((c) => c.name === 'pass_list')).to.include({ generation: 2, table_name: 'pass_list_g2' });
    });

    it('writes hot rows every few pages; stopped in between, each read model resumes from its own checkpoint, exact', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 30; i++) await db.log.passes(1, 1);
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);
      const names = ['organizations', 'pass_list'];
      const positions = async () => {
        const { rows } = await db.knex.raw<{ rows: Array<{ name: string; p: string }> }>(
          'SELECT name, position_prepare::text AS p FROM projection_rebuilds ORDER BY name',
        );
        return new Map(rows.map((r) => [r.name, BigInt(r.p)]));
      };

      const abort = new AbortController();
      let pages = 0;
      const onProgress = (p: { phase: string }) => {
        if (p.phase === 'replaying' && ++pages === HOT_ROWS_PAGES + 5) abort.abort();
      };
      await rebuildProjections(names, depsOf(db), { batchSize: 1, signal: abort.signal, onProgress }).then(
        () => expect.fail('the rebuild was stopped'),
        (e: unknown) => expect(e).to.be.instanceOf(RebuildStopped),
      );
      const at = await positions();
      expect([...at.keys()]).to.deep.equal(names);
      expect(at.get('organizations')! > 0n, `the hot rows (pass counts) were written once, at page ${HOT_ROWS_PAGES}`).to.equal(true);
      expect(at.get('organizations')! < at.get('pass_list')!, 'and not with the pages after it').to.equal(true);

      // Resumed, every read model is written up to the head before the switch.
      const log = await visibleLog(db);
      const head = log.at(-1)!.position.prepare;
      let before: Map<string, bigint> | null = null;
      const result = await rebuildProjections(names, depsOf(db), { batchSize: 1, beforeSwitch: async () => void (before = await positions()) });
      expect(before).to.deep.equal(new Map(names.map((n) => [n, head])));
      expect(result.events, 'the events after the hot rows were last written, each once').to.equal(
        log.filter((e) => e.position.prepare > at.get('organizations')!).length,
      );
      expect((await checkpoints(db.knex)).filter((c) => names.includes(c.name)).map((c) => c.generation)).to.deep.equal([2, 2]);
      await expectExact(db.knex, { passes: 30, revoked: 0, perOrg: { 1: 30 } });
    });

    it('reports a failure after it was asked to stop as stopped, the failure as its cause (Ctrl-C stops an embedded server too)', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 5; i++) await db.log.passes(1, 2);
      const abort = new AbortController();
      const gone = new Error('terminating connection due to administrator command');
      // A page's subject keys are still on their way when the stop is asked for (as the page
      // after it is read), and the server goes away with the same signal: that query fails
      // while the page is worked on, before the next check of the stop.
      let keyQueries = 0;
      let failKeys: ((error: unknown) => void) | null = null;
      const subjectKeys = Object.assign(Object.create(db.subjectKeys) as typeof db.subjectKeys, {
        getMany: (ids: string[]) => (++keyQueries < 2 ? db.subjectKeys.getMany(ids) : new Promise<never>((_, reject) => (failKeys = reject))),
      });
      const store = Object.assign(Object.create(db.store) as typeof db.store, {
        readAll: (options?: ReadAllOptions) => {
          if (failKeys) {
            abort.abort();
            failKeys(gone);
          }
          return db.store.readAll(options);
        },
      });
      const stopped = await rebuildProjection('pass_list', { ...depsOf(db), subjectKeys, store }, { batchSize: 2, signal: abort.signal }).then(
        () => expect.fail('the rebuild was stopped'),
        (e: unknown) => e,
      );
      expect(stopped).to.be.instanceOf(RebuildStopped).with.property('cause', gone);
    });

    /** A pass_list rebuild stopped after its first page: its table pass_list_g2 is there, unindexed. */
    async function interruptedPassListRebuild(): Promise<void> {
      const abort = new AbortController();
      const stopped = rebuildProjection('pass_list', depsOf(db), { batchSize: 10, signal: abort.signal, onProgress: () => abort.abort() });
      await stopped.then(
        () => expect.fail('the rebuild was to be interrupted'),
        (e: unknown) => expect(e).to.be.instanceOf(RebuildStopped),
      );
    }

    async function indexesOf(table: string): Promise<Array<{ name: string; valid: boolean; def: string }>> {
      const { rows } = await db.knex.raw(
        `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
         JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ?::regclass AND NOT i.indisprimary ORDER BY 1`,
        [table],
      );
      return rows;
    }

    /** Runs `during` while another connection holds `lock` in a transaction, which `release` commits (else it is rolled back). */
    async function whileHeld(lock: string, during: (release: () => Promise<void>) => Promise<void>): Promise<void> {
      const blocker = createKnex(db.url, { max: 1 });
      const held = await blocker.transaction();
      try {
        await held.raw(lock);
        await during(async () => void (await held.commit()));
      } finally {
        if (!held.isCompleted()) await held.rollback();
        await blocker.destroy();
      }
    }

    it('builds its indexes without holding back the log: events appended meanwhile are read at once', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 10; i++) await db.log.passes(1, 2);
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);
      await interruptedPassListRebuild();

      // A writer's lock on the new table holds the index build at its start, wherever that is.
      await whileHeld('LOCK TABLE pass_list_g2 IN ROW EXCLUSIVE MODE', async (release) => {
        const rebuild = rebuildProjection('pass_list', depsOf(db), { batchSize: 10 });
        rebuild.catch(() => undefined);
        let building = false;
        for (let i = 0; i < 200 && !building; i++) {
          const { rows } = await db.knex.raw(
            "SELECT command FROM pg_stat_progress_create_index WHERE relid = 'pass_list_g2'::regclass AND command = 'CREATE INDEX CONCURRENTLY'",
          );
          building = rows.length > 0;
          if (!building) await new Promise((r) => setTimeout(r, 25));
        }
        expect(building, 'an index build of pass_list_g2 under way').to.equal(true);

        // While it is under way, a new event reaches the live read model (readers see it).
        await db.log.passes(1, 1);
        await waitForCheckpoints(db.knex, db.log.last, 10_000);
        expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(21);

        await release();
        await rebuild;
      });
      expect((await indexesOf('pass_list_g2')).map((i) => i.valid)).to.deep.equal([true, true, true, true, true]);
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(21);
    });

    it('builds its indexes beside the replay; stopped meanwhile, it waits for the build under way and starts no other', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 40; i++) await db.log.passes(1, 5);
      await interruptedPassListRebuild();
      const head = await db.store.headPosition();
      const building = async () =>
        (await db.knex.raw("SELECT 1 FROM pg_stat_progress_create_index WHERE relid = 'pass_list_g2'::regclass AND command = 'CREATE INDEX CONCURRENTLY'")).rows
          .length > 0;

      // A writer's lock on the new table holds the first index build at its start.
      const abort = new AbortController();
      let settled = false;
      let stopped: Promise<unknown> = Promise.resolve();
      await whileHeld('LOCK TABLE pass_list_g2 IN ROW EXCLUSIVE MODE', async (release) => {
        stopped = rebuildProjection('pass_list', depsOf(db), { batchSize: 5, signal: abort.signal });
        stopped.then(
          () => (settled = true),
          () => (settled = true),
        );
        let replayedWhenSeen: bigint | null = null;
        for (let i = 0; i < 1000 && replayedWhenSeen === null; i++) {
          if (await building()) {
            replayedWhenSeen = BigInt((await db.knex.raw("SELECT position_prepare::text AS p FROM projection_rebuilds WHERE name = 'pass_list'")).rows[0].p);
          } else await new Promise((r) => setTimeout(r, 5));
        }
        expect(replayedWhenSeen, 'an index build of pass_list_g2 under way').to.not.equal(null);
        expect(replayedWhenSeen! < head.prepare, 'the build started before the replay reached the head').to.equal(true);

        abort.abort();
        await new Promise((r) => setTimeout(r, 300));
        expect(settled, 'a stopped rebuild waits for the index build under way').to.equal(false);
        await release();
      });
      await stopped.then(
        () => expect.fail('the rebuild was stopped'),
        (e: unknown) => expect(e).to.be.instanceOf(RebuildStopped),
      );
      expect(await building()).to.equal(false);
      expect((await indexesOf('pass_list_g2')).map((i) => [i.name, i.valid])).to.deep.equal([['pass_list_g2_public_id_key', true]]);
      expect((await db.knex.raw("SELECT indexed FROM projection_rebuilds WHERE name = 'pass_list'")).rows).to.deep.equal([{ indexed: false }]);

      // Resumed, it builds the others and switches over.
      await rebuildProjection('pass_list', depsOf(db), { batchSize: 5 });
      expect((await indexesOf('pass_list_g2')).map((i) => i.valid)).to.deep.equal([true, true, true, true, true]);
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(200);
    });

    it('resumes after an interrupted index build: keeps the valid indexes, builds the failed one again', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 10; i++) await db.log.passes(1, 2);
      await interruptedPassListRebuild();
      // As a crash in the index phase leaves them: one index built, one failed concurrent build (invalid).
      await db.knex.raw('CREATE UNIQUE INDEX pass_list_g2_public_id_key ON pass_list_g2 (public_id)');
      await db.knex
        .raw('CREATE UNIQUE INDEX CONCURRENTLY pass_list_g2_org_created_idx ON pass_list_g2 (org_id)')
        .then(() => expect.fail('a unique index over one organization fails'), () => undefined);
      expect((await indexesOf('pass_list_g2')).map((i) => [i.name, i.valid])).to.deep.equal([
        ['pass_list_g2_org_created_idx', false],
        ['pass_list_g2_public_id_key', true],
      ]);

      await rebuildProjection('pass_list', depsOf(db), { batchSize: 10 });
      const indexes = await indexesOf('pass_list_g2');
      expect(indexes.map((i) => [i.name, i.valid])).to.deep.equal([
        ['pass_list_g2_batch_idx', true],
        ['pass_list_g2_org_created_idx', true],
        ['pass_list_g2_org_creator_created_idx', true],
        ['pass_list_g2_public_id_key', true],
        ['pass_list_g2_search_trgm_idx', true],
      ]);
      expect(indexes[1]!.def).to.include('(org_id, created_at DESC, pass_id DESC)');
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(20);
    });

    it('writes its pages from a thread on a connection of its own; a page whose connection is lost is written again on a new one, each event counted once', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 20; i++) await db.log.passes(1, 2);
      await interruptedPassListRebuild();
      const lines: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });

      // The progress row held: the next page's write waits inside its transaction, rows sent. The
      // organizations' hot rows start from the beginning, so the retry reads pages again.
      let result: RebuildResult | null = null;
      await whileHeld("SELECT 1 FROM projection_rebuilds WHERE name = 'pass_list' FOR UPDATE", async (release) => {
        const rebuild = rebuildProjections(['organizations', 'pass_list'], depsOf(db, logger), { batchSize: 10 });
        rebuild.catch(() => undefined);
        const writer = async () =>
          (
            await db.knex.raw(
              `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ? AND wait_event_type = 'Lock'`,
              [PAGE_WRITER_APPLICATION_NAME],
            )
          ).rows as Array<{ pid: number }>;
        let waiting: Array<{ pid: number }> = [];
        for (let i = 0; i < 200 && waiting.length === 0; i++) {
          waiting = await writer();
          if (waiting.length === 0) await new Promise((r) => setTimeout(r, 25));
        }
        expect(waiting, "the page writer's connection, waiting for the progress row").to.have.length(1);
        await db.knex.raw('SELECT pg_terminate_backend(?)', [waiting[0]!.pid]);
        await release();
        result = await rebuild;
      });
      expect(result!.events).to.equal((await visibleLog(db)).length);
      const retried = lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => /rebuild step failed: .*terminat.*; retrying/.test(l.msg));
      expect(retried, 'one retry, after the lost connection').to.have.length(1);
      await expectExact(db.knex, { passes: 40, revoked: 0, perOrg: {} });
      expect(await count(db.knex, 'SELECT pass_count AS n FROM organizations WHERE org_id = 1')).to.equal(40);
      expect((await checkpoints(db.knex)).find((c) => c.name === 'pass_list')).to.include({ generation: 2, table_name: 'pass_list_g2' });
      const left = await db.knex.raw('SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?', [
        PAGE_WRITER_APPLICATION_NAME,
      ]);
      expect(left.rows, "the writer's connection is closed with the rebuild").to.have.length(0);
    });

    it('fails at once with the projection and the SQLSTATE when the database refuses a page (not retried)', async () => {
      const brittle = brittleProjection();
      await db.log.organization(1);
      await db.log.passes(1, 4);
      const lines: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      const failed = await rebuildProjection('brittle', depsOf(db, logger), { projections: [brittle] }).then(
        () => expect.fail('the check constraint refuses pass 3'),
        (e: unknown) => e,
      );
      expect(failed).to.be.instanceOf(ProjectionWriteError).with.property('projection', 'brittle');
      expect((failed as ProjectionWriteError).message).to.match(/^projection brittle failed to write events .*check constraint/);
      const cause = (failed as ProjectionWriteError).cause as { code?: string; constraint?: string };
      expect(cause.code, 'check_violation').to.equal('23514');
      expect(cause.constraint).to.match(/^brittle_g\d+_pass_id_check$/);
      expect(lines, 'no retry').to.have.length(0);
    });

    it('refuses a second rebuild of the same projection while one runs', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 10; i++) await db.log.passes(1, 1);
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      const first = rebuildProjection('pass_list', depsOf(db), { batchSize: 5, beforeSwitch: () => held });
      await new Promise((r) => setTimeout(r, 300));
      let error: unknown;
      try {
        await rebuildProjection('pass_list', depsOf(db));
      } catch (e) {
        error = e;
      }
      release();
      await first;
      expect(String(error)).to.match(/already running/);
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(10);
    });

    it('tells every process that a switched-over read model changed, so nothing cached from the old table is served', async () => {
      await db.log.organization(1);
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);
      const watermark = new PostgresReadModelWatermark(db.knex, { pollIntervalMs: 600_000 });
      const heard: Array<readonly string[] | null> = [];
      watermark.onRowsChanged((projections) => heard.push(projections));
      try {
        for (let i = 0; i < 100 && !watermark.hearsEveryChange(); i++) await new Promise((r) => setTimeout(r, 20));
        await rebuildProjection('api_keys', depsOf(db));
        for (let i = 0; i < 100 && !heard.flat().includes('api_keys'); i++) await new Promise((r) => setTimeout(r, 20));
        expect(heard).to.deep.include(['api_keys']);
      } finally {
        await watermark.close();
      }
    });

    it('rebuilds in the background when a runner meets a projection at another version', async () => {
      await db.log.organization(1);
      for (let i = 0; i < 5; i++) await db.log.passes(1, 2);
      const v1 = await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);
      await v1.stop();

      const next = passListProjection.version + 1;
      const v2 = { ...passListProjection, version: next };
      await started(new ProjectionRunner(depsOf(db), { projections: ALL_PROJECTIONS.map((p) => (p.name === 'pass_list' ? v2 : p)) }));
      await db.log.passes(1, 1);
      const deadline = Date.now() + 15_000;
      let passList = (await checkpoints(db.knex)).find((c) => c.name === 'pass_list')!;
      while (passList.version !== next && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        passList = (await checkpoints(db.knex)).find((c) => c.name === 'pass_list')!;
      }
      expect(passList).to.include({ version: next, generation: 2, table_name: 'pass_list_g2' });
      await db.log.passes(1, 1);
      await waitForCheckpoints(db.knex, db.log.last);
      expect(await count(db.knex, 'SELECT count(*) AS n FROM pass_list')).to.equal(12);
    });
  });

  describe('read-model watermark', () => {
    it('answers at once for a position already reached, waits for a later one, and times out when nothing runs', async () => {
      await db.log.organization(1);
      await started(new ProjectionRunner(depsOf(db)));
      await waitForCheckpoints(db.knex, db.log.last);
      // Polling set far beyond the test: only NOTIFY can wake the waiters in time.
      let queries = 0;
      const counted = new Proxy(db.knex, {
        get: (target, key, receiver) => {
          if (key === 'raw') queries++;
          return Reflect.get(target, key, receiver);
        },
      });
      const watermark = new PostgresReadModelWatermark(counted, { pollIntervalMs: 600_000 });
      try {
        expect(await watermark.waitFor(db.log.last, 2000)).to.equal(true);
        await new Promise((r) => setTimeout(r, 200)); // the LISTEN connection's first read settles
        // Once loaded, a reached position is answered from memory, without a query.
        const before = queries;
        expect(await watermark.waitFor(db.log.last, 2000, ['pass_list'])).to.equal(true);
        expect(queries).to.equal(before);

        const position = await db.log.append('organization-1', [{ type: 'OrganizationInviteAllowanceChanged', data: { orgId: 1, inviteAllowance: 7 } }]);
        const waited = await watermark.waitFor(position, 5000, ['organizations']);
        expect(waited).to.equal(true);
        expect(await count(db.knex, 'SELECT invite_allowance AS n FROM organizations WHERE org_id = 1')).to.equal(7);

        await Promise.all(runners.splice(0).map((r) => r.stop()));
        const unreached = await db.log.append('organization-1', [{ type: 'OrganizationInviteAllowanceChanged', data: { orgId: 1, inviteAllowance: 8 } }]);
        const t1 = Date.now();
        expect(await watermark.waitFor(unreached, 300)).to.equal(false);
        expect(Date.now() - t1).to.be.within(250, 1500);
        expect(await watermark.waitFor(START, 0)).to.equal(true);
      } finally {
        await watermark.close();
      }
    });

    it('wakes many concurrent waiters from one LISTEN connection', async () => {
      await db.log.organization(1);
      const watermark = new PostgresReadModelWatermark(db.knex, { pollIntervalMs: 600_000 });
      try {
        const positions: Position[] = [];
        for (let i = 0; i < 10; i++) positions.push((await db.log.passes(1, 1), db.log.last));
        const waits = Array.from({ length: 100 }, (_, i) => watermark.waitFor(positions[i % 10]!, 15_000, ['pass_list', 'organizations']));
        await new Promise((r) => setTimeout(r, 200));
        const listening = await count(
          db.knex,
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN projection_progress%'",
        );
        expect(listening).to.equal(1);
        // The runner lives on another connection pool, as in a separate projections process.
        const otherKnex = createKnex(db.url, { max: 3 });
        const runner = new ProjectionRunner({ knex: otherKnex, store: db.store, subjectKeys: db.subjectKeys, logger: silent }, { batchSize: 3 });
        try {
          await runner.start();
          expect(await Promise.all(waits)).to.deep.equal(Array(100).fill(true));
        } finally {
          await runner.stop();
          await otherKnex.destroy();
        }
      } finally {
        await watermark.close();
      }
    });

    it('tells other processes which read models a batch changed, and that changes may be missed once it stops hearing them', async () => {
      const watermark = new PostgresReadModelWatermark(db.knex, { pollIntervalMs: 600_000 });
      const heard: Array<readonly string[] | null> = [];
      watermark.onRowsChanged((projections) => heard.push(projections));
      const otherKnex = createKnex(db.url, { max: 3 });
      const runner = new ProjectionRunner({ knex: otherKnex, store: db.store, subjectKeys: db.subjectKeys, logger: silent });
      try {
        for (let i = 0; i < 100 && !watermark.hearsEveryChange(); i++) await new Promise((r) => setTimeout(r, 20));
        expect(watermark.hearsEveryChange()).to.equal(true);
        await runner.start();
        await db.log.organization(1);
        await db.log.passes(1, 1);
        await waitForCheckpoints(db.knex, db.log.last);
        for (let i = 0; i < 100 && !heard.flat().includes('pass_list'); i++) await new Promise((r) => setTimeout(r, 20));
        expect(heard.flat()).to.include.members(['organizations', 'pass_list']);
        expect(heard.flat()).not.to.include('api_keys');
      } finally {
        await runner.stop();
        await otherKnex.destroy();
        await watermark.close();
      }
      expect(watermark.hearsEveryChange()).to.equal(false);
      expect(heard.at(-1)).to.equal(null);
    });

    it('takes progress reported by a runner in the same process without a round trip', async () => {
      const watermark = new PostgresReadModelWatermark(db.knex, { pollIntervalMs: 600_000 });
      try {
        await db.log.organization(1);
        const wait = watermark.waitFor(db.log.last, 5000, ['users']);
        watermark.observe([{ name: 'users', position: db.log.last }]);
        expect(await wait).to.equal(true);
      } finally {
        await watermark.close();
      }
    });
  });
});
