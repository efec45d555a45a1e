import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { main, type Io } from '../../cli/guestpass.js';
import { freshDatabase } from '../support/database.js';

/** Runs the CLI in-process against one database and data folder, capturing what it prints. */
function cli(databaseUrl: string, dataDir: string) {
  return async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l) };
    const code = await main(argv, io, { DATABASE_URL: databaseUrl, GUESTPASS_DATA_DIR: dataDir, LOG_LEVEL: 'silent', PROJECTION_WAIT_MS: '5000' });
    return { code, out, err, json: () => JSON.parse(out.at(-1) ?? 'null') as Record<string, unknown> };
  };
}

describe('operator CLI (npx guestpass)', function () {
  this.timeout(60_000);
  let run: ReturnType<typeof cli>;
  let dataDir: string;

  before(async () => {
    // No embedded broker recorded here: the door commands find no MQTT broker.
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-cli-'));
    run = cli(await freshDatabase('cli'), dataDir);
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  it('creates an organization, an admin, a facility and an API key, printing one JSON object each', async () => {
    const org = await run('org', 'create', '--name', 'Acme', '--invite-allowance', '25', '--json');
    expect(org.code).to.equal(0);
    const orgId = org.json().id;
    expect(orgId).to.be.a('number');

    const user = await run('user', 'create', '--org', String(orgId), '--email', 'ada@acme.test', '--first-name', 'Ada', '--last-name', 'Lovelace',
      '--password', 'correct horse battery', '--role', 'admin', '--role', 'self_invite', '--json');
    expect(user.code, user.err.join('\n')).to.equal(0);
    expect(user.json().id).to.be.a('number');

    const facility = await run('facility', 'create', '--org', String(orgId), '--name', 'HQ', '--description', 'Front door', '--json');
    expect(facility.code).to.equal(0);
    expect(facility.json().id).to.be.a('number');

    const key = await run('apikey', 'create', '--org', String(orgId), '--user', String(user.json().id), '--scopes', 'org:passes:read,org:passes:write',
      '--allow-ip', '10.0.0.0/8', '--name', 'Billing sync', '--json');
    expect(key.code, key.err.join('\n')).to.equal(0);
    expect(key.json().api_key).to.match(/^svc_sk_[A-Za-z0-9_-]{43}$/);
    expect(key.json().id).to.be.a('string');

    const revoked = await run('apikey', 'revoke', String(key.json().id), '--json');
    expect(revoked.json()).to.deep.equal({ id: key.json().id, revoked: true });
    const again = await run('apikey', 'revoke', String(key.json().id), '--json');
    expect(again.json().revoked).to.equal(false);

    // The export is the auditor's view of the log: every fact, and no secret.
    const exported = await run('events', 'export');
    expect(exported.code).to.equal(0);
    const lines = exported.out.map((l) => JSON.parse(l) as { type: string; stream: string; metadata: { actor: { kind: string } } });
    expect(lines.map((l) => l.type)).to.include.members(['OrganizationCreated', 'UserAdded', 'RoleGranted', 'FacilityAdded', 'ApiKeyCreated', 'ApiKeyRevoked']);
    expect(lines.every((l) => l.metadata.actor.kind === 'operator')).to.equal(true);
    const keyCreated = exported.out.map((l) => JSON.parse(l) as { type: string; data: { name?: unknown } }).find((l) => l.type === 'ApiKeyCreated');
    expect(keyCreated?.data.name).to.equal('Billing sync');
    const text = exported.out.join('\n');
    expect(text).not.to.include(String(key.json().api_key));
    expect(text).not.to.include('correct horse battery');

    const oneStream = await run('events', 'export', '--stream', `organization-${orgId}`);
    expect(oneStream.out.map((l) => (JSON.parse(l) as { type: string }).type)).to.deep.equal(['OrganizationCreated']);
  });

  it('refuses a second user of the organization with the same email (any case) as a conflict', async () => {
    const orgId = String((await run('org', 'create', '--name', 'Gamma', '--json')).json().id);
    const user = (email: string) => run('user', 'create', '--org', orgId, '--email', email, '--first-name', 'Ada', '--last-name', 'Byron', '--json');
    expect((await user('ada.byron@acme.test')).code).to.equal(0);
    const again = await user('Ada.Byron@ACME.test');
    expect(again.code).to.equal(1);
    expect(again.json()).to.deep.include({ error: 'conflict' });
    expect(again.json().message).to.match(/already has a user with this email/);
  });

  it('suspends, resumes and deactivates a facility, and reports a change that changes nothing', async () => {
    const orgId = (await run('org', 'create', '--name', 'Beta', '--json')).json().id;
    const id = String((await run('facility', 'create', '--org', String(orgId), '--name', 'Lab', '--json')).json().id);
    expect((await run('facility', 'suspend', id, '--json')).json()).to.deep.equal({ id: Number(id), changed: true });
    expect((await run('facility', 'resume', id, '--json')).json().changed).to.equal(true);
    expect((await run('facility', 'deactivate', id, '--json')).json().changed).to.equal(true);
    const suspendDeactivated = await run('facility', 'suspend', id, '--json');
    expect(suspendDeactivated.code).to.equal(1);
    expect(suspendDeactivated.json().error).to.equal('conflict');
  });

  it('reports every projection position and lag, and rebuilds one blue/green', async () => {
    const status = await run('projections', 'status', '--json');
    expect(status.code).to.equal(0);
    const report = status.json() as { projections: Array<{ name: string; lag: number }> };
    expect(report.projections.map((p) => p.name)).to.include.members(['pass_list', 'facilities', 'api_keys', 'users', 'organizations']);

    const rebuilt = await run('projections', 'rebuild', 'facilities', '--json');
    expect(rebuilt.code, rebuilt.err.join('\n')).to.equal(0);
    const result = rebuilt.json() as { rebuilt: Array<{ name: string; generation: number }>; events: number };
    expect(result.rebuilt).to.have.length(1);
    expect(result.rebuilt[0]!.name).to.equal('facilities');
    expect(result.rebuilt[0]!.generation).to.be.greaterThan(1);
    expect(result.events).to.be.greaterThan(0);
  });

  it('refuses bad input with a usage error (exit 2) and a domain error with exit 1, never a stack trace for either', async () => {
    const missing = await run('org', 'create', '--json');
    expect(missing.code).to.equal(2);
    expect(missing.json()).to.deep.include({ error: 'usage' });

    const unknownFlag = await run('facility', 'create', '--org', '1', '--name', 'X', '--colour', 'red');
    expect(unknownFlag.code).to.equal(2);
    expect(unknownFlag.err.join('\n')).to.match(/colour/);

    const notANumber = await run('user', 'create', '--org', 'abc', '--email', 'a@b.test', '--first-name', 'A', '--last-name', 'B');
    expect(notANumber.code).to.equal(2);

    const badRole = await run('user', 'create', '--org', '1', '--email', 'a@b.test', '--first-name', 'A', '--last-name', 'B', '--role', 'root');
    expect(badRole.code).to.equal(2);

    const noOrg = await run('facility', 'create', '--org', '999999', '--name', 'Ghost', '--json');
    expect(noOrg.code).to.equal(1);
    expect(noOrg.json().error).to.equal('not_found');
    expect(noOrg.err.join('\n')).not.to.match(/\n\s+at /);

    const unknown = await run('frobnicate');
    expect(unknown.code).to.equal(2);
  });

  it('refuses a word no option takes, naming it, rather than dropping it (an unquoted `--name Acme Corp`)', async () => {
    const refused = [
      ['org', 'create', '--name', 'Acme', 'Corp'],
      ['user', 'create', '--org', '1', '--email', 'mary@acme.test', '--first-name', 'Mary', 'Corp', '--last-name', 'Ann'],
      ['facility', 'create', '--org', '1', '--name', 'Side', 'Corp'],
      ['facility', 'suspend', '1', 'Corp'],
      ['apikey', 'create', '--org', '1', '--user', '1', '--scopes', 'org:passes:read', 'Corp'],
      ['apikey', 'revoke', 'key', 'Corp'],
      ['events', 'export', 'Corp'],
      ['projections', 'status', 'Corp'],
      ['door', 'scan', '--facility', '1', '--qr', 'abc', 'Corp'],
      ['door', 'simulate', '--facility', '1', 'Corp'],
    ];
    for (const argv of refused) {
      const result = await run(...argv, '--json');
      expect(result.code, argv.join(' ')).to.equal(2);
      expect(result.json(), argv.join(' ')).to.deep.include({ error: 'usage' });
      expect(result.json().message, argv.join(' ')).to.match(/unexpected argument "Corp"/);
    }

    // Quoted, the value keeps its spaces.
    const quoted = await run('org', 'create', '--name', 'Acme Corp', '--json');
    expect(quoted.code, quoted.err.join('\n')).to.equal(0);
    const exported = await run('events', 'export', '--stream', `organization-${quoted.json().id}`);
    expect((JSON.parse(exported.out[0]!) as { data: { name: string } }).data.name).to.equal('Acme Corp');
  });

  it('refuses an unknown projection name as a usage error listing the known ones, before rebuilding anything', async () => {
    const result = await run('projections', 'rebuild', 'facilities', 'nosuch');
    expect(result.code).to.equal(2);
    const said = result.err.join('\n');
    expect(said).to.match(/unknown projection "nosuch"; known: .*pass_list.*facilities/);
    expect(said).not.to.match(/\n\s+at /);
    const json = await run('projections', 'rebuild', 'nosuch', '--json');
    expect(json.code).to.equal(2);
    expect(json.json()).to.deep.include({ error: 'usage' });
  });

  it('answers the door commands\' errors in JSON with --json, as every other command', async () => {
    const usage = await run('door', 'scan', '--json');
    expect(usage.code).to.equal(2);
    expect(usage.out).to.have.length(1);
    expect(usage.json()).to.deep.equal({ error: 'usage', message: '--facility is required' });
    expect(usage.err).to.deep.equal([]);

    const noBroker = await run('door', 'scan', '--facility', '1', '--qr', 'abc', '--json');
    expect(noBroker.code).to.equal(1);
    expect(noBroker.out).to.have.length(1);
    expect(noBroker.json()).to.deep.include({ error: 'failed' });
    expect(noBroker.json().message).to.match(/^no MQTT broker/);
    expect(noBroker.err).to.deep.equal([]);

    // Without --json: one line on stderr, as the other commands print it.
    const text = await run('door', 'scan', '--facility', '1', '--qr', 'abc');
    expect(text.code).to.equal(1);
    expect(text.out).to.deep.equal([]);
    expect(text.err).to.deep.equal(['guestpass: no MQTT broker: set MQTT_URL, or start the server (npm start) to use its embedded broker']);
  });
});
