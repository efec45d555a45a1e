// The console's "Resend message" over HTTP, with pass delivery running into the outbox: a host
// resends and a second email for the batch, with the same pass link and a Message-ID of its own,
// reaches the outbox; a second click within 10 minutes is refused with the time it will be
// allowed; 20 concurrent resends record one request and send one new email; another host's pass
// is 404 and a revoked one is refused.
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { csrfTokenOf, type Browser } from '../sign-in/support/browser.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { streams } from '../../shared/domain/events.js';
import { OutboxMailSender, OutboxSmsSender } from '../../shared/delivery/outbox.js';
import { browserSignedInAgo } from './support/console-session.js';

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('console: resending the guest\'s message', function () {
  this.timeout(120_000);
  let stack: Stack;
  let dataDir: string;
  let outbox: string;
  let orgId: number;
  let facilityId: number;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gp-console-resend-'));
    outbox = path.join(dataDir, 'outbox');
    stack = await startStack({ label: 'console_resend', delivery: { mail: new OutboxMailSender(outbox), sms: new OutboxSmsSender(outbox), pollIntervalMs: 200 } });
    ({ orgId, facilityId } = await stack.seed.tenant());
  });
  after(async () => {
    await stack?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The batch's emails in the outbox, oldest first (each file is named after its batch). */
  async function emailsOf(batchId: string): Promise<string[]> {
    const names = (await readdir(outbox).catch(() => [] as string[])).filter((n) => n.endsWith(`-${batchId}-email.eml`)).sort();
    return Promise.all(names.map((n) => readFile(path.join(outbox, n), 'utf8')));
  }
  const header = (mail: string, name: string) => new RegExp(`^${name}: (.+)$`, 'mi').exec(mail)?.[1]?.trim();

  /** A host's new pass (by the console's form), once its first email is in the outbox. */
  async function passOf(browser: Browser, firstName: string): Promise<{ publicId: string; batchId: string; link: string }> {
    const form = await browser.get('/passes/new');
    const created = await browser.post('/passes/new', {
      csrf: csrfTokenOf(form.text),
      first_name: firstName,
      email: `${firstName.toLowerCase()}@example.com`,
      facility_id: String(facilityId),
      arrival_date: new Date().toISOString().slice(0, 10),
      quantity: '1',
    });
    expect(created.status, created.text).to.equal(201);
    const link = /href="(http[^"]+\/p\/[A-Za-z0-9_-]{32})"/.exec(created.text)![1]!;
    const row = await stack.db(READ_MODELS.passList).where({ org_id: orgId, first_name: firstName }).first('public_id', 'batch_id');
    await until(async () => (await emailsOf(row.batch_id)).length === 1, 'the first email in the outbox');
    return { publicId: row.public_id, batchId: row.batch_id, link };
  }

  /** Waits until the batch's delivery stream records a success in the round after `rounds` resends. */
  async function roundDelivered(batchId: string, rounds: number): Promise<void> {
    await until(async () => {
      const events = await stack.store.readStream(streams.passDelivery(batchId));
      const last = events.findLastIndex((e) => e.type === 'PassMessageResendRequested');
      const resends = events.filter((e) => e.type === 'PassMessageResendRequested').length;
      return resends === rounds && events.slice(last + 1).some((e) => e.type === 'PassDeliverySucceeded');
    }, `round ${rounds} recorded as delivered`);
  }

  it('a host resends: a second email with the same link reaches the outbox; a second click within 10 minutes is refused', async () => {
    const host = await stack.seed.user(orgId, { roles: ['self_invite'], inviteAllowance: 10 });
    const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    const pass = await passOf(browser, 'Rosa');

    const detail = await browser.get(`/passes/${pass.publicId}`);
    expect(detail.text).to.include('Resend message');
    const resent = await browser.post(`/passes/${pass.publicId}/resend`, { csrf: csrfTokenOf(detail.text) });
    expect(resent.status, resent.text).to.equal(302);
    expect(resent.location).to.include(`/passes/${pass.publicId}?notice=resent`);

    await until(async () => (await emailsOf(pass.batchId)).length === 2, 'the second email in the outbox');
    const [first, second] = await emailsOf(pass.batchId);
    expect(header(second!, 'X-Outbox-Link')).to.equal(pass.link);
    expect(second).to.include('rosa@example.com');
    // Its own Message-ID: a receiver that drops repeats keeps the message the guest asked for.
    expect(header(first!, 'Message-ID')).to.match(new RegExp(`^<pass-${pass.batchId}@`));
    expect(header(second!, 'Message-ID')).to.match(new RegExp(`^<pass-${pass.batchId}-r1@`));

    // The request is an event naming the host.
    const requests = (await stack.store.readStream(streams.passDelivery(pass.batchId))).filter((e) => e.type === 'PassMessageResendRequested');
    expect(requests).to.have.length(1);
    expect(requests[0]!.metadata.actor).to.deep.equal({ kind: 'user', id: host.userId });
    expect(requests[0]!.data).to.include({ batchId: pass.batchId, orgId, requestedBy: host.userId });

    const again = await browser.post(`/passes/${pass.publicId}/resend`, { csrf: csrfTokenOf(detail.text) });
    expect(again.status).to.equal(409);
    const allowedAt = new Date(Math.ceil((Date.parse((requests[0]!.data as { requestedAt: string }).requestedAt) + 600_000) / 60_000) * 60_000);
    expect(again.text).to.include(`You can resend at ${allowedAt.toISOString().slice(11, 16)} UTC.`);
    expect(again.headers.get('cache-control')).to.equal('no-store');
    await roundDelivered(pass.batchId, 1);
    expect(await emailsOf(pass.batchId)).to.have.length(2);

    // Another host's pass is 404; a POST without the CSRF token is refused.
    const other = await stack.seed.user(orgId, { roles: ['self_invite'] });
    const otherBrowser = await browserSignedInAgo(stack, { userId: other.userId, orgId });
    const otherPage = await otherBrowser.get('/passes');
    expect((await otherBrowser.post(`/passes/${pass.publicId}/resend`, { csrf: csrfTokenOf(otherPage.text) })).status).to.equal(404);
    expect((await browser.post(`/passes/${pass.publicId}/resend`, {})).status).to.be.oneOf([400, 403]);
  });

  it('20 concurrent resends record one request and send exactly one new email', async () => {
    const host = await stack.seed.user(orgId, { roles: ['self_invite'], inviteAllowance: 10 });
    const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    const pass = await passOf(browser, 'Cora');
    const csrf = csrfTokenOf((await browser.get(`/passes/${pass.publicId}`)).text);

    const answers = await Promise.all(Array.from({ length: 20 }, () => browser.post(`/passes/${pass.publicId}/resend`, { csrf })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 302), statuses.join(' ')).to.have.length(1);
    expect(statuses.filter((s) => s === 409), statuses.join(' ')).to.have.length(19);

    await roundDelivered(pass.batchId, 1);
    await until(async () => (await stack.db('pass_delivery_jobs').where({ batch_id: pass.batchId }).first('done')).done === true, 'the batch off the work list again');
    const mails = await emailsOf(pass.batchId);
    expect(mails).to.have.length(2);
    expect(header(mails[1]!, 'X-Outbox-Link')).to.equal(pass.link);
  });

  it('refuses to resend for a revoked pass: nothing is sent', async () => {
    const host = await stack.seed.user(orgId, { roles: ['self_invite'], inviteAllowance: 10 });
    const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    const pass = await passOf(browser, 'Vic');
    const detail = await browser.get(`/passes/${pass.publicId}`);
    const revoked = await browser.post(`/passes/${pass.publicId}/revoke`, { csrf: csrfTokenOf(detail.text), confirm: 'yes' });
    expect(revoked.status).to.equal(302);
    const refused = await browser.post(`/passes/${pass.publicId}/resend`, { csrf: csrfTokenOf(detail.text) });
    expect(refused.status).to.equal(409);
    expect(refused.text).to.include('nothing was sent');
    expect((await stack.store.readStream(streams.passDelivery(pass.batchId))).some((e) => e.type === 'PassMessageResendRequested')).to.equal(false);
  });
});
