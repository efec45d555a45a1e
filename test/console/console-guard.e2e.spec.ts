// The console's guards over HTTP: not signed in goes to /signin and back to the page asked for;
// roles are read on every request (a role taken away closes the page at once); every POST needs
// the CSRF token; every page is no-store and never framed; a stale sign-in must sign in again
// before a secret-handing action.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { Browser, csrfTokenOf } from '../sign-in/support/browser.js';
import { RECENT_AUTHENTICATION_SECONDS } from '../../shared/sign-in/session-decider.js';
import { streams } from '../../shared/domain/events.js';
import { userDecider } from '../../shared/domain/user-decider.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { browserSignedInAgo } from './support/console-session.js';

describe('console guards', function () {
  this.timeout(60_000);
  let stack: Stack;
  let orgId: number;

  before(async () => {
    stack = await startStack({ label: 'console_guard' });
    ({ orgId } = await stack.seed.tenant());
  });
  after(async () => {
    await stack?.stop();
  });

  function expectPageHeaders(res: { headers: Headers }): void {
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(res.headers.get('content-security-policy')).to.not.include('unsafe-inline');
  }

  it('sends a browser that is not signed in to /signin, then back to the page it asked for', async () => {
    const admin = await stack.seed.user(orgId, { roles: ['admin'] });
    const browser = new Browser(stack.baseUrl);
    const first = await browser.get('/settings?from=test');
    expect(first.status).to.equal(302);
    expect(first.location).to.equal('/signin');
    const signIn = await browser.get('/signin');
    const done = await browser.post('/signin', { csrf: csrfTokenOf(signIn.text), email: admin.email, password: admin.password! });
    expect(done.status).to.equal(302);
    expect(done.location).to.equal('/settings?from=test');
    const settings = await browser.get('/settings?from=test');
    expect(settings.status).to.equal(200);
    expect(settings.text).to.include('<h1>Settings</h1>');
    expectPageHeaders(settings);
    // Used once: the next sign-in without a console page asked for lands on /account again.
    expect(browser.jar.get('gp_return')).to.equal(undefined);
  });

  it('a return address that is not a path of this site is never used', async () => {
    const admin = await stack.seed.user(orgId, { roles: ['admin'] });
    for (const foreign of ['//evil.example/settings', '/\\evil.example', 'https://evil.example/']) {
      const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId }, RECENT_AUTHENTICATION_SECONDS + 60);
      const page = await browser.get('/settings');
      await browser.post('/console/reauthenticate', { csrf: csrfTokenOf(page.text), return_to: foreign });
      const signIn = await browser.get('/signin');
      const done = await browser.post('/signin', { csrf: csrfTokenOf(signIn.text), email: admin.email, password: admin.password! });
      expect(done.location, foreign).to.equal('/invitations');
    }
  });

  it('a user without the admin role gets the 403 page on /settings, and the page opens the moment the role is granted', async () => {
    const host = await stack.seed.user(orgId, { roles: ['self_invite'] });
    const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    const refused = await browser.get('/settings');
    expect(refused.status).to.equal(403);
    expect(refused.text).to.include('You do not have access to this page');
    expectPageHeaders(refused);
    // The navigation offers only what the roles allow.
    expect(refused.text).to.not.include('href="/settings/clients"');
    const ctx = { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' as const }, now: new Date() };
    const { position } = await stack.deps.handler.handle(streams.user(host.userId), userDecider, { type: 'GrantRole', data: { userId: host.userId, role: 'admin' } }, ctx);
    await stack.deps.watermark.waitFor(position, 5000, [READ_MODELS.users]);
    expect((await browser.get('/settings')).status).to.equal(200);
    const revoked = await stack.deps.handler.handle(streams.user(host.userId), userDecider, { type: 'RevokeRole', data: { userId: host.userId, role: 'admin' } }, ctx);
    await stack.deps.watermark.waitFor(revoked.position, 5000, [READ_MODELS.users]);
    expect((await browser.get('/settings')).status).to.equal(403);
  });

  it('refuses a POST without the CSRF token, or with another browser\'s', async () => {
    const admin = await stack.seed.user(orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId });
    const page = await browser.get('/settings');
    const token = csrfTokenOf(page.text);
    const none = await browser.post('/console/reauthenticate', { return_to: '/settings' });
    expect(none.status).to.equal(403);
    expect(none.text).to.include('This form has expired');
    expectPageHeaders(none);
    const other = new Browser(stack.baseUrl);
    const otherToken = csrfTokenOf((await other.get('/signin')).text);
    expect((await browser.post('/console/reauthenticate', { csrf: otherToken, return_to: '/settings' })).status).to.equal(403);
    const ok = await browser.post('/console/reauthenticate', { csrf: token, return_to: '/settings' });
    expect(ok.status).to.equal(302);
    expect(ok.location).to.equal('/signin');
  });

  it('a sign-in older than 10 minutes signs in again and comes back to the page', async () => {
    const admin = await stack.seed.user(orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId }, RECENT_AUTHENTICATION_SECONDS + 60);
    const page = await browser.get('/settings');
    const again = await browser.post('/console/reauthenticate', { csrf: csrfTokenOf(page.text), return_to: '/settings/api-keys/new' });
    expect(again.location).to.equal('/signin');
    const signIn = await browser.get('/signin');
    expect(signIn.status, 'an old session may sign in again').to.equal(200);
    const done = await browser.post('/signin', { csrf: csrfTokenOf(signIn.text), email: admin.email, password: admin.password! });
    expect(done.location).to.equal('/settings/api-keys/new');
  });

  it('serves its stylesheet and script from this origin', async () => {
    const css = await fetch(`${stack.baseUrl}/console/style.css`);
    expect(css.status).to.equal(200);
    expect(css.headers.get('content-type')).to.match(/^text\/css/);
    const js = await fetch(`${stack.baseUrl}/console/console.js`);
    expect(js.status).to.equal(200);
    expect(js.headers.get('content-type')).to.match(/^text\/javascript/);
  });
});
