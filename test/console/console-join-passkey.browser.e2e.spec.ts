// The join page's passkey, in headless Chromium with a virtual authenticator: an invitee without
// an account opens the emailed link, gives their names and makes the account with a passkey
// instead of a password (no password on the account; the passkey recorded on it; signed in with
// amr hwk+user), accepts, and later signs in with that passkey alone. The page passes axe at both
// sizes with the passkey section shown; without a script it is the password form only. The
// ceremony's endpoints refuse a post without the CSRF token, and a verify with no ceremony adds
// nobody. The issuer is http://localhost:{port}: browsers refuse an IP address as a WebAuthn RP ID.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireComponent } from '../support/components.js';
import { startStack, type Stack } from '../support/stack.js';
import { attachVirtualAuthenticator } from '../support/virtual-authenticator.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { streams } from '../../shared/domain/events.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { OutboxMailSender, OutboxSmsSender } from '../../shared/delivery/outbox.js';
import { createInvitation } from '../../command-service/invitations/create-invitation.js';
import { Browser, csrfTokenOf } from '../sign-in/support/browser.js';
import { CHROMIUM_PATH, ConsoleBrowser, chromiumAvailable, expectConsoleHeaders, submit } from './support/console-browser.js';
import { invitationLinkFor } from './support/invitation-mail.js';

const toLocalhost = (url: string) => url.replace('//127.0.0.1:', '//localhost:');

describe('console: joining with a passkey (headless Chromium, virtual authenticator)', function () {
  this.timeout(120_000);
  let stack: Stack | undefined;
  let chrome: ConsoleBrowser | undefined;
  let outbox: string;
  let orgId: number;

  before(async function () {
    requireComponent(this, 'Chromium', await chromiumAvailable(), `no executable at ${CHROMIUM_PATH}: install Debian's chromium or set CHROMIUM_PATH`);
    outbox = await mkdtemp(path.join(os.tmpdir(), 'console-join-passkey-'));
    stack = await startStack({
      label: 'console_join_passkey',
      issuer: toLocalhost,
      delivery: { mail: new OutboxMailSender(outbox), sms: new OutboxSmsSender(outbox), pollIntervalMs: 200 },
    });
    ({ orgId } = await stack.seed.tenant());
    chrome = await ConsoleBrowser.launch(toLocalhost(stack.baseUrl));
  });
  after(async () => {
    await chrome?.close();
    await stack?.stop();
    if (outbox !== undefined) await rm(outbox, { recursive: true, force: true });
  });

  /** An invitation to `email` (with a role), and its emailed link on localhost. */
  async function invite(email: string): Promise<string> {
    await createInvitation(stack!.deps, { orgId, email, role: 'self_invite' }, { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() });
    return toLocalhost(await invitationLinkFor(outbox, email));
  }

  async function sessionAmr(page: Page): Promise<unknown> {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'gp_session');
    expect(cookie, 'a session cookie').to.not.equal(undefined);
    const [started] = await stack!.store.readStream(oauthStreams.signInSession(sha256Hex(cookie!.value)));
    return (started?.data as { amr?: unknown } | undefined)?.amr;
  }

  it('an invitee makes the account with a passkey, is signed in by it, accepts, and later signs in with it alone', async () => {
    const link = await invite('hedy@example.com');
    const page = await chrome!.newPage();
    await attachVirtualAuthenticator(page);
    expectConsoleHeaders(await page.goto(link), 'the join page');
    await page.getByRole('heading', { name: 'Sign in with a passkey' }).waitFor();
    await chrome!.check(page, 'join-passkey');

    // No names yet: the server's words, in the status line; nothing was made.
    await page.getByRole('button', { name: 'Create account with a passkey' }).click();
    await page.getByText('Enter your first name and last name.', { exact: false }).waitFor();
    expect(await page.locator('.passkey-status').textContent()).to.match(/^Enter your first name and last name\. Your account was not set up with a passkey/);
    expect(await stack!.db(READ_MODELS.users).where({ email: 'hedy@example.com' })).to.deep.equal([]);

    await page.getByLabel('First name').fill('Hedy');
    await page.getByLabel('Last name').fill('Lamarr');
    await Promise.all([page.waitForURL('**/invitations?notice=joined'), page.getByRole('button', { name: 'Create account with a passkey' }).click()]);
    expect(await page.locator('.panel').textContent()).to.include('Your account is ready.');
    await chrome!.check(page, 'join-passkey-joined');

    const user = await stack!.db(READ_MODELS.users).first('user_id', 'first_name', 'last_name', 'org_id').where({ email: 'hedy@example.com' });
    expect(user).to.deep.include({ first_name: 'Hedy', last_name: 'Lamarr' });
    expect(Number(user.org_id)).to.equal(orgId);
    const userId = Number(user.user_id);
    const [added] = await stack!.store.readStream(streams.user(userId));
    expect(added?.type).to.equal('UserAdded');
    expect((added!.data as { passwordHash: unknown }).passwordHash, 'no password on the account').to.equal(null);
    const credentials = await stack!.store.readStream(oauthStreams.userCredentials(userId));
    expect(credentials.map((e) => e.type)).to.deep.equal(['PasskeyRegistered']);
    expect(await sessionAmr(page)).to.deep.equal(['hwk', 'user']);

    await submit(page, 'Accept');
    expect(await page.locator('.panel').textContent()).to.include('Invitation accepted.');
    expect((await stack!.db(READ_MODELS.users).first('roles').where({ user_id: userId })).roles).to.deep.equal(['self_invite']);

    // Signed out (a fresh browser state), the passkey alone signs the person in again.
    await page.context().clearCookies();
    await page.goto('/invitations');
    expect(new URL(page.url()).pathname).to.equal('/signin');
    await Promise.all([page.waitForURL('**/invitations'), page.locator('#passkey-signin').click()]);
    expect(await page.getByText('hedy@example.com').count()).to.be.greaterThan(0);
    expect(await sessionAmr(page)).to.deep.equal(['hwk', 'user']);
  });

  it('without a script the join page is the password form alone', async () => {
    const link = await invite('ida@example.com');
    const page = await chrome!.newPage({ javaScriptEnabled: false });
    await page.goto(link);
    expect(await page.locator('#join-passkey').isVisible()).to.equal(false);
    expect(await page.getByLabel('Password').isVisible()).to.equal(true);
  });

  it('the ceremony needs the CSRF token, and a verify without a ceremony adds no one', async () => {
    const link = await invite('joan@example.com');
    const http = new Browser(stack!.baseUrl);
    const page = await http.get(new URL(link).pathname);
    expect(page.status).to.equal(200);
    const json = { 'Content-Type': 'application/json', Accept: 'application/json' };
    const names = JSON.stringify({ first_name: 'Joan', last_name: 'Clarke' });
    const options = `${new URL(link).pathname}/passkey/options`;
    const forged = await http.request('POST', options, { headers: json, body: names });
    expect(forged.status).to.equal(403);
    const allowed = await http.request('POST', options, { headers: { ...json, 'X-CSRF-Token': csrfTokenOf(page.text) }, body: names });
    expect(allowed.status).to.equal(200);
    expect(allowed.headers.get('cache-control')).to.equal('no-store');
    expect(JSON.parse(allowed.text).rp.id).to.equal('localhost');

    // A well-formed but made-up attestation, from a browser that holds no ceremony.
    const stranger = new Browser(stack!.baseUrl);
    const strangerPage = await stranger.get(new URL(link).pathname);
    const credential = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' }, clientExtensionResults: {} };
    const refused = await stranger.request('POST', `${new URL(link).pathname}/passkey/verify`, {
      headers: { ...json, 'X-CSRF-Token': csrfTokenOf(strangerPage.text) },
      body: JSON.stringify({ first_name: 'Joan', last_name: 'Clarke', credential }),
    });
    expect(refused.status).to.equal(400);
    expect(await stack!.db(READ_MODELS.users).where({ email: 'joan@example.com' })).to.deep.equal([]);
  });
});
