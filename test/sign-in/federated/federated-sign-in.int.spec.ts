// Which local user an upstream identity signs in (resolveFederatedUser) over the real event store
// and read models: linking by email on first sign-in, then by (issuer, subject). The e2e suite
// runs the protocol against another instance of this service, whose userinfo marks every address
// unverified, and against oidc-provider; here the upstream's claims are given directly, so each
// linking rule is exercised.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../../support/stack.js';
import { resolveFederatedUser, type UpstreamIdentity } from '../../../command-service/sign-in/federated/federated-sign-in.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import type { EmailClaims } from '../../../shared/sign-in/federated/federated-account.js';

const ISSUER = 'https://idp.example.com';

describe('federated sign-in: finding and linking the local user (int)', function () {
  this.timeout(30_000);
  let stack: Stack;
  let orgId: number;

  before(async () => {
    stack = await startStack({ label: 'federated-link' });
    orgId = (await stack.seed.tenant()).orgId;
  });

  after(async () => {
    await stack?.stop();
  });

  const address = () => `link-${randomUUID().slice(0, 8)}@example.com`;
  const ctx = () => ({ correlationId: randomUUID(), causationId: null, now: new Date() });

  function identity(subject: string, claims: EmailClaims, userInfo: EmailClaims | null = null): UpstreamIdentity & { userInfoCalls: number } {
    const id = {
      issuer: ISSUER,
      subject,
      claims,
      userInfoCalls: 0,
      userInfo: async () => {
        id.userInfoCalls += 1;
        return userInfo;
      },
    };
    return id;
  }

  async function links(userId: number) {
    return (await stack.store.readStream(oauthStreams.userCredentials(userId))).filter((e) => e.type === 'FederatedIdentityLinked');
  }

  it('links by email on first sign-in, then signs in by (issuer, subject) without any email', async () => {
    const email = address();
    const user = await stack.seed.user(orgId, { email });
    const subject = randomUUID();

    const first = await resolveFederatedUser(stack.deps, identity(subject, { email: email.toUpperCase(), email_verified: true }), ctx());
    expect(first).to.deep.equal({ outcome: 'signed_in', userId: user.userId, orgId, linked: true });
    const recorded = await links(user.userId);
    expect(recorded.map((e) => e.data)).to.deep.equal([{ userId: user.userId, orgId, issuer: ISSUER, subject }]);
    expect(recorded[0]!.metadata.actor).to.deep.equal({ kind: 'user', id: user.userId });

    const later = identity(subject, {});
    expect(await resolveFederatedUser(stack.deps, later, ctx())).to.deep.equal({ outcome: 'signed_in', userId: user.userId, orgId, linked: false });
    expect(later.userInfoCalls).to.equal(0);
    expect(await links(user.userId)).to.have.length(1);
  });

  it('reads a verified address from userinfo when the id_token has none', async () => {
    const email = address();
    const user = await stack.seed.user(orgId, { email });
    const id = identity(randomUUID(), {}, { email, email_verified: true });
    expect(await resolveFederatedUser(stack.deps, id, ctx())).to.include({ outcome: 'signed_in', userId: user.userId, linked: true });
    expect(id.userInfoCalls).to.equal(1);
  });

  it('does not ask userinfo when the id_token carries a verified address', async () => {
    const email = address();
    await stack.seed.user(orgId, { email });
    const id = identity(randomUUID(), { email, email_verified: true }, { email: 'someone-else@example.com', email_verified: true });
    expect(await resolveFederatedUser(stack.deps, id, ctx())).to.include({ outcome: 'signed_in' });
    expect(id.userInfoCalls).to.equal(0);
  });

  it('asks userinfo when the id_token\'s address is not verified, and takes a verified one from there', async () => {
    const email = address();
    const user = await stack.seed.user(orgId, { email });
    const id = identity(randomUUID(), { email }, { email, email_verified: true });
    expect(await resolveFederatedUser(stack.deps, id, ctx())).to.include({ outcome: 'signed_in', userId: user.userId, linked: true });
    expect(id.userInfoCalls).to.equal(1);
  });

  for (const [label, claims] of [
    ['without email_verified', {}],
    ['with email_verified false', { email_verified: false }],
    ['with email_verified "false"', { email_verified: 'false' }],
  ] as const) {
    it(`refuses an address ${label} (id_token or userinfo), and links nothing`, async () => {
      const email = address();
      const user = await stack.seed.user(orgId, { email });
      const id = identity(randomUUID(), { email, ...claims }, { email, ...claims });
      expect(await resolveFederatedUser(stack.deps, id, ctx())).to.deep.equal({ outcome: 'no_account', reason: 'email not verified by the provider' });
      expect(await links(user.userId)).to.deep.equal([]);
    });
  }

  it('never takes one source\'s email_verified for the other\'s address', async () => {
    const email = address();
    const user = await stack.seed.user(orgId, { email });
    const outcome = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email }, { email_verified: true }), ctx());
    expect(outcome).to.deep.equal({ outcome: 'no_account', reason: 'email not verified by the provider' });
    const reverse = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email_verified: true }, { email }), ctx());
    expect(reverse).to.deep.equal({ outcome: 'no_account', reason: 'email not verified by the provider' });
    expect(await links(user.userId)).to.deep.equal([]);
  });

  it('links an address whatever email_verified says when the operator trusts the upstream\'s addresses', async () => {
    const email = address();
    const user = await stack.seed.user(orgId, { email });
    const omitted = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email }), ctx(), { trustUnverifiedEmail: true });
    expect(omitted).to.include({ outcome: 'signed_in', userId: user.userId, linked: true });
    const other = await stack.seed.user(orgId, { email: address() });
    const refused = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email: other.email, email_verified: false }), ctx(), { trustUnverifiedEmail: true });
    expect(refused).to.include({ outcome: 'signed_in', userId: other.userId, linked: true });
  });

  it('says when the provider gave no address at all', async () => {
    expect(await resolveFederatedUser(stack.deps, identity(randomUUID(), {}, null), ctx())).to.deep.equal({ outcome: 'no_account', reason: 'no usable email from the provider' });
  });

  it('refuses an address no local user has', async () => {
    const outcome = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email: address(), email_verified: true }), ctx());
    expect(outcome).to.deep.equal({ outcome: 'no_account', reason: 'no user with this email' });
  });

  it('refuses an address two local users share (in two organizations)', async () => {
    const email = address();
    const otherOrg = (await stack.seed.tenant()).orgId;
    const [a, b] = await Promise.all([stack.seed.user(orgId, { email }), stack.seed.user(otherOrg, { email })]);
    const outcome = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email, email_verified: true }), ctx());
    expect(outcome).to.deep.equal({ outcome: 'no_account', reason: 'email is ambiguous' });
    expect(await links(a.userId)).to.deep.equal([]);
    expect(await links(b.userId)).to.deep.equal([]);
  });

  it('refuses a second upstream account with the same address once one is linked', async () => {
    const email = address();
    const user = await stack.seed.user(orgId, { email });
    const first = randomUUID();
    expect(await resolveFederatedUser(stack.deps, identity(first, { email, email_verified: true }), ctx())).to.include({ outcome: 'signed_in' });
    const outcome = await resolveFederatedUser(stack.deps, identity(randomUUID(), { email, email_verified: true }), ctx());
    expect(outcome).to.deep.equal({ outcome: 'no_account', reason: 'another account of this provider is linked' });
    expect((await links(user.userId)).map((e) => (e.data as { subject: string }).subject)).to.deep.equal([first]);
  });
});
