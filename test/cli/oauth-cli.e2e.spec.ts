import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { main, type Io } from '../../cli/guestpass.js';
import { openRuntime, type Runtime } from '../../runtime/runtime.js';
import { registerClient } from '../../command-service/oauth-clients/register-client.js';
import { loadConfig } from '../../shared/config.js';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import type { InvitationRow, OAuthClientRow } from '../../shared/db/read-models.js';
import { createLogger } from '../../shared/logger.js';
import { createOAuthServices } from '../../shared/oauth/oauth-services.js';
import { newFamilyId, sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { accessTokenAudience, localKeySet, mintAccessToken, verifyAccessToken } from '../../shared/oauth/tokens.js';
import { freshDatabase } from '../support/database.js';

const KEK = randomBytes(32).toString('hex');
const ISSUER = 'http://127.0.0.1:8080';

/** Runs the CLI in-process against one database, capturing what it prints. */
function cli(databaseUrl: string) {
  return async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l) };
    const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', PROJECTION_WAIT_MS: '5000', OAUTH_KEY_ENCRYPTION_KEY: KEK };
    const code = await main(argv, io, env);
    return { code, out, err, json: () => JSON.parse(out.at(-1) ?? 'null') as Record<string, unknown> };
  };
}

describe('operator CLI: OAuth clients, signing keys and invitations', function () {
  this.timeout(60_000);
  let databaseUrl: string;
  let run: ReturnType<typeof cli>;
  let knex: Knex;

  const newOrg = async (name: string) => {
    const org = await run('org', 'create', '--name', name, '--json');
    expect(org.code, org.err.join('\n')).to.equal(0);
    return String(org.json().id);
  };
  const clientRow = async (clientId: unknown) => (await knex<OAuthClientRow>('oauth_clients').where({ client_id: String(clientId) }).first())!;

  before(async () => {
    databaseUrl = await freshDatabase('oauth_cli');
    run = cli(databaseUrl);
    knex = createKnex(databaseUrl, { max: 2 });
  });

  after(async () => {
    await knex?.destroy();
  });

  describe('client', () => {
    let orgId: string;
    before(async () => {
      orgId = await newOrg('Acme');
    });

    it('creates a public client: an id, no secret, the default scopes', async () => {
      const created = await run('client', 'create', '--org', orgId, '--name', 'Door App', '--type', 'public',
        '--redirect-uri', 'https://app.example.com/cb', '--redirect-uri', 'com.example.app:/oauth2redirect',
        '--post-logout-redirect-uri', 'https://app.example.com/bye', '--json');
      expect(created.code, created.err.join('\n')).to.equal(0);
      expect(Object.keys(created.json())).to.deep.equal(['client_id']);
      expect(created.json().client_id).to.match(/^svc_[0-9a-f]{32}$/);

      const row = await clientRow(created.json().client_id);
      expect(row).to.deep.include({
        org_id: Number(orgId),
        name: 'Door App',
        client_type: 'public',
        secret_hash: null,
        redirect_uris: ['https://app.example.com/cb', 'com.example.app:/oauth2redirect'],
        post_logout_redirect_uris: ['https://app.example.com/bye'],
        allowed_scopes: ['openid', 'profile', 'email'],
        deleted: false,
      });
    });

    it('creates a confidential client whose secret is printed once and stored only as its SHA-256', async () => {
      // Scopes given every way an operator may type them: bare words, repeats, commas.
      const created = await run('client', 'create', '--org', orgId, '--name', 'Reception Backend', '--type', 'confidential',
        '--redirect-uri', 'https://backend.example.com/cb', '--scopes', 'openid', 'offline_access', '--scopes', 'passes:read,invites:read', '--json');
      expect(created.code, created.err.join('\n')).to.equal(0);
      const { client_id: clientId, client_secret: secret } = created.json();
      expect(secret).to.be.a('string').and.match(/^[A-Za-z0-9_-]{43}$/);

      const row = await clientRow(clientId);
      expect(row.client_type).to.equal('confidential');
      expect(row.secret_hash).to.equal(sha256Hex(String(secret)));
      expect(row.allowed_scopes).to.deep.equal(['openid', 'offline_access', 'passes:read', 'invites:read']);

      const { rows } = await knex.raw<{ rows: Array<{ data: string; metadata: string }> }>('SELECT data::text AS data, metadata::text AS metadata FROM events');
      expect(rows.length).to.be.greaterThan(0);
      for (const event of rows) {
        expect(event.data).not.to.include(String(secret));
        expect(event.metadata).not.to.include(String(secret));
      }

      const human = await run('client', 'create', '--org', orgId, '--name', 'Kiosk', '--type', 'confidential', '--redirect-uri', 'https://kiosk.example.com/cb',
        '--scopes', 'openid profile');
      expect(human.code, human.err.join('\n')).to.equal(0);
      expect(human.out.join('\n')).to.match(/confidential OAuth client svc_[0-9a-f]{32} created; client secret, shown once/);
      const printed = human.out.join('\n').split('\n').at(-1)!;
      const kiosk = await knex<OAuthClientRow>('oauth_clients').where({ name: 'Kiosk' }).first();
      expect(kiosk!.secret_hash).to.equal(sha256Hex(printed));
      expect(kiosk!.allowed_scopes).to.deep.equal(['openid', 'profile']);
    });

    it("lists the organization's live clients, never a secret or its hash", async () => {
      const otherOrg = await newOrg('Other');
      const foreign = await run('client', 'create', '--org', otherOrg, '--name', 'Foreign', '--type', 'public', '--redirect-uri', 'https://other.example.com/cb', '--json');

      const listed = await run('client', 'list', '--org', orgId, '--json');
      expect(listed.code, listed.err.join('\n')).to.equal(0);
      const clients = listed.json().clients as Array<Record<string, unknown>>;
      expect(clients.map((c) => c.name)).to.deep.equal(['Door App', 'Reception Backend', 'Kiosk']);
      expect(clients.map((c) => c.client_id)).not.to.include(foreign.json().client_id);
      expect(Object.keys(clients[0]!)).to.have.members(['client_id', 'name', 'type', 'redirect_uris', 'post_logout_redirect_uris', 'scopes', 'created_at']);
      expect(clients[1]).to.deep.include({ type: 'confidential', redirect_uris: ['https://backend.example.com/cb'], post_logout_redirect_uris: [] });
      expect(new Date(String(clients[0]!.created_at)).toISOString()).to.equal(clients[0]!.created_at);
      const hashes = (await knex<OAuthClientRow>('oauth_clients').whereNotNull('secret_hash').pluck('secret_hash')) as string[];
      expect(hashes).to.have.length(2);
      for (const hash of hashes) expect(listed.out.join('\n')).not.to.include(hash);

      const human = await run('client', 'list', '--org', orgId);
      expect(human.out.join('\n')).to.include('Reception Backend').and.include('scopes: openid profile email');
      const empty = await run('client', 'list', '--org', await newOrg('Empty'));
      expect(empty.out.join('\n')).to.match(/has no OAuth clients/);
      const ghost = await run('client', 'list', '--org', '999999', '--json');
      expect(ghost.code).to.equal(1);
      expect(ghost.json().error).to.equal('not_found');
    });

    it("deletes a client; an unknown client or another organization's is not found", async () => {
      const doomed = (await run('client', 'create', '--org', orgId, '--name', 'Doomed', '--type', 'public', '--redirect-uri', 'http://127.0.0.1/cb', '--json')).json();
      const deleted = await run('client', 'delete', '--org', orgId, '--client', String(doomed.client_id), '--json');
      expect(deleted.code, deleted.err.join('\n')).to.equal(0);
      expect(deleted.json()).to.deep.equal({ client_id: doomed.client_id, deleted: true });
      expect((await clientRow(doomed.client_id)).deleted).to.equal(true);
      const listed = (await run('client', 'list', '--org', orgId, '--json')).json().clients as Array<{ client_id: string }>;
      expect(listed.map((c) => c.client_id)).not.to.include(doomed.client_id);

      const again = await run('client', 'delete', '--org', orgId, '--client', String(doomed.client_id), '--json');
      expect(again.code).to.equal(1);
      expect(again.json().error).to.equal('not_found');

      const kept = (await run('client', 'create', '--org', orgId, '--name', 'Kept', '--type', 'public', '--redirect-uri', 'http://127.0.0.1/cb', '--json')).json();
      const foreign = await run('client', 'delete', '--org', await newOrg('Intruder'), '--client', String(kept.client_id), '--json');
      expect(foreign.code).to.equal(1);
      expect(foreign.json().error).to.equal('not_found');
      expect((await clientRow(kept.client_id)).deleted).to.equal(false);

      const missing = await run('client', 'delete', '--org', orgId, '--json');
      expect(missing.code).to.equal(2);
    });

    it("refuses a bad redirect URI or an unknown scope with the decider's message, and bad flags as usage errors", async () => {
      const plainHttp = await run('client', 'create', '--org', orgId, '--name', 'Bad', '--type', 'public', '--redirect-uri', 'http://app.example.com/cb', '--json');
      expect(plainHttp.code).to.equal(1);
      expect(plainHttp.json().error).to.equal('validation_failed');
      expect(plainHttp.json().message).to.match(/invalid redirect URI: .*must use https/);
      expect(plainHttp.json().details).to.have.length(1);

      const fragment = await run('client', 'create', '--org', orgId, '--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb#x');
      expect(fragment.code).to.equal(1);
      expect(fragment.err.join('\n')).to.match(/fragment/);
      expect(fragment.err.join('\n')).not.to.match(/\n\s+at /);

      const badLogout = await run('client', 'create', '--org', orgId, '--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb',
        '--post-logout-redirect-uri', 'javascript:alert(1)', '--json');
      expect(badLogout.json().message).to.match(/post-logout redirect URI/);

      const unknownScope = await run('client', 'create', '--org', orgId, '--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb',
        '--scopes', 'openid,org:passes:write', '--json');
      expect(unknownScope.code).to.equal(1);
      expect(unknownScope.json().message).to.match(/unknown scope "org:passes:write"/);

      const noScopes = await run('client', 'create', '--org', orgId, '--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb', '--scopes', ' , ', '--json');
      expect(noScopes.json().message).to.match(/at least one allowed scope/);

      for (const argv of [
        ['--name', 'Bad', '--type', 'secretive', '--redirect-uri', 'https://app.example.com/cb'],
        ['--name', 'Bad', '--type', 'public'],
        ['--type', 'public', '--redirect-uri', 'https://app.example.com/cb'],
        ['--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb', 'stray'],
      ]) {
        const refused = await run('client', 'create', '--org', orgId, ...argv, '--json');
        expect(refused.code, argv.join(' ')).to.equal(2);
        expect(refused.json().error).to.equal('usage');
      }

      const noOrg = await run('client', 'create', '--org', '999999', '--name', 'Ghost', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb', '--json');
      expect(noOrg.code).to.equal(1);
      expect(noOrg.json().error).to.equal('not_found');
      expect(await knex('oauth_clients').where({ name: 'Bad' }).first()).to.equal(undefined);
    });

    it('refuses the 51st client of an organization', async () => {
      const fullOrg = Number(await newOrg('Full'));
      const config = loadConfig({ DATABASE_URL: databaseUrl, PROJECTION_WAIT_MS: '0' });
      const runtime: Runtime = await openRuntime(config, createLogger('silent', 'test'));
      try {
        const ctx = { correlationId: randomUUID(), actor: { kind: 'operator' as const }, now: new Date() };
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            registerClient(runtime.deps, { orgId: fullOrg, name: `App ${i}`, clientType: 'public', redirectUris: [`https://app${i}.example.com/cb`] }, ctx),
          ),
        );
      } finally {
        await runtime.close();
      }
      const refused = await run('client', 'create', '--org', String(fullOrg), '--name', 'One Too Many', '--type', 'public', '--redirect-uri', 'https://app.example.com/cb', '--json');
      expect(refused.code).to.equal(1);
      expect(refused.json()).to.deep.include({ error: 'conflict' });
      expect(refused.json().message).to.match(/at most 50 OAuth clients/);
      // The list catches up with the 50 written by another process without a projection runner.
      expect((await run('client', 'list', '--org', String(fullOrg), '--json')).json().clients).to.have.length(50);
    });
  });

  describe('keys rotate', () => {
    it('makes a new key sign while the previous one stays in the JWKS until its tokens have expired', async () => {
      const before = createOAuthServices(knex, databaseUrl, { issuer: ISSUER, kek: Buffer.from(KEK, 'hex') });
      try {
        const oldKey = await before.signingKeys.current();
        const now = new Date();
        const { token } = await mintAccessToken(oldKey, {
          issuer: ISSUER,
          audience: accessTokenAudience(ISSUER),
          subject: '42',
          clientId: `svc_${'a'.repeat(32)}`,
          scopes: ['openid'],
          familyId: newFamilyId(),
          now,
        });

        const rotated = await run('keys', 'rotate', '--json');
        expect(rotated.code, rotated.err.join('\n')).to.equal(0);
        const { kid, previous_kid: previousKid, previous_retires_at: retiresAt } = rotated.json();
        expect(previousKid).to.equal(oldKey.kid);
        expect(kid).to.be.a('string').and.not.equal(previousKid);
        // Published at least as long as an access token (15 min) lives after the rotation.
        expect(new Date(String(retiresAt)).getTime()).to.be.greaterThan(now.getTime() + 15 * 60_000);

        const jwks = await before.signingKeys.jwks();
        expect(jwks.keys.map((k) => k.kid)).to.deep.equal([kid, previousKid]);
        const claims = await verifyAccessToken(token, localKeySet(jwks), { issuer: ISSUER, audience: accessTokenAudience(ISSUER) });
        expect(claims.sub).to.equal('42');

        const after = createOAuthServices(knex, databaseUrl, { issuer: ISSUER, kek: Buffer.from(KEK, 'hex') });
        try {
          expect((await after.signingKeys.current()).kid).to.equal(kid);
        } finally {
          await after.close();
        }

        const human = await run('keys', 'rotate');
        expect(human.code).to.equal(0);
        expect(human.out.join('\n')).to.match(new RegExp(`now signs new tokens\\nprevious key ${String(kid)} stays in the JWKS until `));
        expect((await before.signingKeys.jwks()).keys).to.have.length(3);
      } finally {
        await before.close();
      }
    });

    it('refuses to rotate with a key-encryption key that cannot open the current key', async () => {
      const out: string[] = [];
      const io: Io = { out: (l) => out.push(l), err: () => undefined };
      const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', OAUTH_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
      const { count: before } = (await knex('oauth_signing_keys').count({ count: '*' }).first()) as { count: string };
      expect(await main(['keys', 'rotate', '--json'], io, env)).to.equal(1);
      expect(JSON.parse(out.at(-1)!)).to.deep.include({ error: 'config' });
      const { count: after } = (await knex('oauth_signing_keys').count({ count: '*' }).first()) as { count: string };
      expect(after).to.equal(before);
    });

    it('takes no arguments', async () => {
      expect((await run('keys', 'rotate', 'now')).code).to.equal(2);
      expect((await run('keys', 'list')).code).to.equal(2);
    });
  });

  describe('invite create', () => {
    it("creates a pending invitation, addressed to the organization's user with that email", async () => {
      const orgId = await newOrg('Inviting');
      const member = await run('user', 'create', '--org', orgId, '--email', 'Grace@Acme.test', '--first-name', 'Grace', '--last-name', 'Hopper', '--json');
      expect(member.code, member.err.join('\n')).to.equal(0);

      const invited = await run('invite', 'create', '--org', orgId, '--email', ' GRACE@acme.TEST ', '--role', 'employee_view', '--json');
      expect(invited.code, invited.err.join('\n')).to.equal(0);
      const inviteId = invited.json().invite_id;
      expect(inviteId).to.be.a('number');
      expect(invited.json()).to.deep.equal({ invite_id: inviteId, email: 'grace@acme.test', role: 'employee_view', status: 'pending' });

      const row = await knex<InvitationRow>('invitations').where({ invite_id: Number(inviteId) }).first();
      expect(row).to.deep.include({ org_id: Number(orgId), email: 'grace@acme.test', user_id: member.json().id, role: 'employee_view', status: 'pending' });

      const events = await run('events', 'export', '--stream', `invitation-${String(inviteId)}`);
      expect(events.out.map((l) => (JSON.parse(l) as { type: string }).type)).to.deep.equal(['InvitationCreated']);
    });

    it("leaves the user id empty when the address belongs to no user of that organization", async () => {
      const orgId = await newOrg('Elsewhere');
      const other = await newOrg('Other Org');
      expect((await run('user', 'create', '--org', other, '--email', 'linus@other.test', '--first-name', 'Linus', '--last-name', 'T')).code).to.equal(0);

      const invited = await run('invite', 'create', '--org', orgId, '--email', 'linus@other.test', '--json');
      expect(invited.code, invited.err.join('\n')).to.equal(0);
      expect(invited.json()).to.deep.include({ role: null, status: 'pending' });
      const row = await knex<InvitationRow>('invitations').where({ invite_id: Number(invited.json().invite_id) }).first();
      expect(row).to.deep.include({ org_id: Number(orgId), user_id: null, role: null });

      const human = await run('invite', 'create', '--org', orgId, '--email', 'ada@else.test', '--role', 'admin');
      expect(human.out.join('\n')).to.match(/^invitation \d+ for ada@else\.test \(role admin\) is pending$/);
    });

    it('refuses an unknown organization, a bad address and an unknown role', async () => {
      const noOrg = await run('invite', 'create', '--org', '999999', '--email', 'a@b.test', '--json');
      expect(noOrg.code).to.equal(1);
      expect(noOrg.json().error).to.equal('not_found');

      const orgId = await newOrg('Strict');
      const badEmail = await run('invite', 'create', '--org', orgId, '--email', 'not-an-address', '--json');
      expect(badEmail.code).to.equal(1);
      expect(badEmail.json().error).to.equal('validation_failed');

      expect((await run('invite', 'create', '--org', orgId, '--email', 'a@b.test', '--role', 'root')).code).to.equal(2);
      expect((await run('invite', 'create', '--org', orgId)).code).to.equal(2);
      expect(await knex('invitations').where({ org_id: Number(orgId) }).first()).to.equal(undefined);
    });
  });

  it('lists the new commands in the usage text', async () => {
    const help = await run('--help');
    expect(help.code).to.equal(0);
    for (const command of ['client create', 'client list', 'client delete', 'keys rotate', 'invite create']) {
      expect(help.out.join('\n')).to.include(command);
    }
  });
});
