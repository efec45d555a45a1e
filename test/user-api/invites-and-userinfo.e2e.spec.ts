// GET /api/v1/invites (pending invitations addressed to the user, by user id or email, with the
// inviting organization's name) and GET/POST /api/oauth/userinfo (scope-gated claims).
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { inviteListSchema, userInfoSchema } from '../../query-service/user/user-api-schemas.js';
import { expectShape } from '../org-api/response-shapes.js';
import { expectInsufficientScope, expectInvalidToken, expectNoStore } from '../support/api-answers.js';
import { accessToken, bearer, seedInvitation, signedInUser, userTenant } from './user-api-fixtures.js';

describe('user API: invitations and userinfo', function () {
  this.timeout(60_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ label: 'user_invites' });
  });
  after(async () => {
    await stack?.stop();
  });

  describe('GET /api/v1/invites', () => {
    it('lists pending invitations matched by user id or by email, newest first, with the organization name', async () => {
      const home = await userTenant(stack, { name: 'Home Org' });
      const me = await signedInUser(stack, home, { email: 'Invitee.Person@Example.com' });
      const someoneElse = await signedInUser(stack, home);
      const acme = await stack.seed.organization({ name: 'Acme Labs' });
      const globex = await stack.seed.organization({ name: 'Globex' });

      const byId = await seedInvitation(stack, { orgId: home.orgId, email: 'old-address@example.com', userId: me.userId, role: 'employee_view' });
      const byEmail = await seedInvitation(stack, { orgId: acme, email: 'INVITEE.person@example.com', role: 'self_invite' });
      const byEmailNoRole = await seedInvitation(stack, { orgId: globex, email: 'invitee.person@example.com' });
      await seedInvitation(stack, { orgId: acme, email: someoneElse.email, userId: someoneElse.userId });
      await seedInvitation(stack, { orgId: acme, email: 'invitee.person@example.org' });

      const res = await stack.request('GET', '/api/v1/invites', { headers: bearer(me.token) });
      expect(res.status, res.text).to.equal(200);
      expectShape(res.body, inviteListSchema);
      expectNoStore(res);
      expect(res.body.success).to.equal(true);
      const invites = res.body.invites as Array<Record<string, unknown>>;
      expect(invites.map((i) => i.id)).to.deep.equal([byEmailNoRole, byEmail, byId]);
      expect(invites[0]).to.deep.include({ role: null, status: 'pending', organization: 'Globex' });
      expect(invites[1]).to.deep.include({ role: 'self_invite', status: 'pending', organization: 'Acme Labs' });
      expect(invites[2]).to.deep.include({ role: 'employee_view', status: 'pending', organization: 'Home Org' });
      for (const invite of invites) expect(Date.parse(invite.created_at as string)).to.be.closeTo(Date.now(), 60_000);

      const theirs = await stack.request('GET', '/api/v1/invites', { headers: bearer(someoneElse.token) });
      expect(theirs.body.invites).to.have.length(1);
      expect(theirs.body.invites[0].organization).to.equal('Acme Labs');
    });

    it('lists only pending invitations', async () => {
      const t = await userTenant(stack);
      const me = await signedInUser(stack, t);
      const pending = await seedInvitation(stack, { orgId: t.orgId, email: me.email });
      // The product UI settles invitations outside this service; a settled one in the read model
      // (written here directly, as no event of this service settles one yet) is never listed.
      const { table_name: table } = await stack.db('projection_checkpoints').where({ name: 'invitations' }).first('table_name');
      await stack.db(table).insert({ invite_id: pending + 500_000, org_id: t.orgId, email: me.email, user_id: me.userId, role: null, status: 'accepted', created_at: new Date(), _commit: 0, _prepare: 0 });
      const res = await stack.request('GET', '/api/v1/invites', { headers: bearer(me.token) });
      expect(res.body.invites.map((i: { id: number }) => i.id)).to.deep.equal([pending]);
    });

    it('is an empty list for a user without invitations', async () => {
      const t = await userTenant(stack);
      const me = await signedInUser(stack, t);
      const res = await stack.request('GET', '/api/v1/invites', { headers: bearer(me.token) });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, invites: [] });
    });

    it('needs invites:read', async () => {
      const t = await userTenant(stack);
      const me = await signedInUser(stack, t, { scopes: ['openid', 'passes:read'] });
      expectInsufficientScope(await stack.request('GET', '/api/v1/invites', { headers: bearer(me.token) }), 'invites:read', 'without invites:read');
    });
  });

  describe('GET and POST /api/oauth/userinfo', () => {
    let tenant: Awaited<ReturnType<typeof userTenant>>;
    let userId: number;
    const userinfo = async (scopes: Parameters<typeof accessToken>[1]['scopes'], method = 'GET') => {
      const token = await accessToken(stack, { userId, clientId: tenant.clientId, scopes });
      return stack.request(method, '/api/oauth/userinfo', { headers: bearer(token) });
    };

    before(async () => {
      tenant = await userTenant(stack);
      // No role at all: UserInfo needs none.
      ({ userId } = await stack.seed.user(tenant.orgId, { email: 'Marie.Curie@Example.com', firstName: 'Marie', lastName: 'Curie', roles: [] }));
    });

    it('gives only sub for openid alone', async () => {
      for (const method of ['GET', 'POST']) {
        const res = await userinfo(['openid'], method);
        expect(res.status, `${method}: ${res.text}`).to.equal(200);
        expectShape(res.body, userInfoSchema);
        expectNoStore(res, method);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.body).to.deep.equal({ sub: String(userId) });
      }
    });

    it('adds the name claims for profile and the email claims for email, never picture', async () => {
      const profile = await userinfo(['openid', 'profile']);
      expect(profile.body).to.deep.equal({ sub: String(userId), name: 'Marie Curie', given_name: 'Marie', family_name: 'Curie' });
      const email = await userinfo(['openid', 'email']);
      expect(email.body).to.deep.equal({ sub: String(userId), email: 'marie.curie@example.com', email_verified: false });
      const everything = await userinfo(['openid', 'profile', 'email', 'passes:read', 'offline_access']);
      expectShape(everything.body, userInfoSchema);
      expect(everything.body).to.deep.equal({
        sub: String(userId),
        name: 'Marie Curie',
        given_name: 'Marie',
        family_name: 'Curie',
        email: 'marie.curie@example.com',
        email_verified: false,
      });
      expect(everything.body).not.to.have.property('picture');
    });

    it('answers POST exactly as GET', async () => {
      const token = await accessToken(stack, { userId, clientId: tenant.clientId, scopes: ['openid', 'profile', 'email'] });
      const got = await stack.request('GET', '/api/oauth/userinfo', { headers: bearer(token) });
      const posted = await stack.request('POST', '/api/oauth/userinfo', { headers: bearer(token) });
      expect(posted.status).to.equal(200);
      expect(posted.body).to.deep.equal(got.body);
    });

    it('403 insufficient_scope naming openid without it; 401 invalid_token without a token', async () => {
      for (const method of ['GET', 'POST']) {
        expectInsufficientScope(await userinfo(['profile', 'email', 'passes:read'], method), 'openid', method);
        expectInvalidToken(await stack.request(method, '/api/oauth/userinfo'), `${method} without a token`);
      }
    });
  });
});
