// The settings pages over HTTP: another organization's ids are 404 on every page and form that
// names one; a client secret rotated in the console replaces the old one (only its hash kept);
// changes are events naming the acting admin.
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { csrfTokenOf, inputValue } from '../sign-in/support/browser.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { browserSignedInAgo } from './support/console-session.js';

describe('console settings', function () {
  this.timeout(60_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ label: 'console_settings' });
  });
  after(async () => {
    await stack?.stop();
  });

  it("gives 404 for another organization's facility, client, key, invitation and user, on pages and forms", async () => {
    const mine = await stack.seed.tenant();
    const theirs = await stack.seed.tenant();
    const theirClient = await stack.seed.client(theirs.orgId, { clientType: 'confidential' });
    const theirUser = await stack.seed.user(theirs.orgId);
    const invitation = await import('../../command-service/invitations/create-invitation.js').then((m) =>
      m.createInvitation(stack.deps, { orgId: theirs.orgId, email: 'x@example.com', role: null }, { correlationId: 'c', causationId: null, actor: { kind: 'operator' }, now: new Date() }),
    );
    const admin = await stack.seed.user(mine.orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId: mine.orgId });
    const csrf = csrfTokenOf((await browser.get('/settings')).text);
    for (const path of [
      `/settings/facilities/${theirs.facilityId}/edit`,
      `/settings/facilities/${theirs.facilityId}/deactivate`,
      `/settings/clients/${theirClient.clientId}/rotate`,
      `/settings/clients/${theirClient.clientId}/delete`,
      `/settings/api-keys/${theirs.keyId}/revoke`,
      `/settings/people/invitations/${invitation.inviteId}/cancel`,
      `/settings/people/${theirUser.userId}`,
      '/settings/facilities/not-a-number/edit',
    ]) {
      const page = await browser.get(path);
      expect(page.status, `GET ${path}`).to.equal(404);
      expect(page.headers.get('cache-control')).to.equal('no-store');
      expect((await browser.post(path, { csrf, confirm: 'yes', name: 'x', roles: 'admin' })).status, `POST ${path}`).to.equal(404);
    }
    for (const path of [`/settings/facilities/${theirs.facilityId}/suspend`, `/settings/facilities/${theirs.facilityId}/resume`]) {
      expect((await browser.post(path, { csrf })).status, `POST ${path}`).to.equal(404);
    }
    // Nothing of theirs changed.
    const facility = await stack.db(READ_MODELS.facilities).first('suspended', 'is_active').where({ facility_id: theirs.facilityId });
    expect(facility).to.deep.equal({ suspended: false, is_active: true });
    expect((await stack.db(READ_MODELS.apiKeys).first('revoked').where({ key_id: theirs.keyId })).revoked).to.equal(false);
  });

  it('rotates a confidential client secret: shown once, only its hash kept, recorded as the admin', async () => {
    const tenant = await stack.seed.tenant();
    const registered = await stack.seed.client(tenant.orgId, { clientType: 'confidential' });
    const admin = await stack.seed.user(tenant.orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId: tenant.orgId });
    const confirm = await browser.get(`/settings/clients/${registered.clientId}/rotate`);
    expect(confirm.status).to.equal(200);
    expect(confirm.text).to.include('Rotate secret');
    const shown = await browser.post(`/settings/clients/${registered.clientId}/rotate`, { csrf: csrfTokenOf(confirm.text), confirm: 'yes' });
    expect(shown.status).to.equal(200);
    expect(shown.headers.get('cache-control')).to.equal('no-store');
    const secret = inputValue(shown.text, 'secret-value') ?? /id="secret-value"[^>]*value="([^"]+)"/.exec(shown.text)?.[1];
    expect(secret).to.be.a('string').and.not.equal(registered.clientSecret);
    const row = await stack.db(READ_MODELS.oauthClients).first('secret_hash').where({ client_id: registered.clientId });
    expect(row.secret_hash).to.equal(sha256Hex(secret!));
    const events = await stack.store.readStream(`oauth-clients-${tenant.orgId}`);
    const rotated = events.find((e) => e.type === 'OAuthClientSecretRotated')!;
    expect(rotated.metadata.actor).to.deep.equal({ kind: 'user', id: admin.userId });
    expect(JSON.stringify(rotated.data)).to.not.include(secret!);
  });

  it('a stale sign-in is asked to sign in again before creating a key, and creates none', async () => {
    const tenant = await stack.seed.tenant();
    const admin = await stack.seed.user(tenant.orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId: tenant.orgId }, 11 * 60);
    const page = await browser.get('/settings/api-keys/new');
    expect(page.status).to.equal(403);
    expect(page.text).to.include('Sign in again to continue');
    const before = await stack.db(READ_MODELS.apiKeys).where({ org_id: tenant.orgId }).count({ n: '*' });
    const post = await browser.post('/settings/api-keys/new', { csrf: csrfTokenOf(page.text), scopes: 'org:passes:read' });
    expect(post.status).to.equal(403);
    expect(await stack.db(READ_MODELS.apiKeys).where({ org_id: tenant.orgId }).count({ n: '*' })).to.deep.equal(before);
  });
});
