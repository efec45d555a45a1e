// The console's /passes, /visitors, /settings/members and /settings/audit over HTTP, as a browser
// without JavaScript uses them: each form calls the API's use case (a 402 explained in words, a
// revoked pass 409 at the API after), each change is an event naming the signed-in user, another
// organization's things are 404, every page is no-store.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { csrfTokenOf, type Browser } from '../sign-in/support/browser.js';
import { RECENT_AUTHENTICATION_SECONDS } from '../../shared/sign-in/session-decider.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { passDoorAccessDecider } from '../../shared/domain/pass-check-in.js';
import { browserSignedInAgo } from './support/console-session.js';

function multipart(fields: Record<string, string>, file: { name: string; filename: string; content: string }): { body: string; type: string } {
  const boundary = `----console${randomUUID()}`;
  let body = '';
  for (const [name, value] of Object.entries(fields)) body += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  body += `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: text/csv\r\n\r\n${file.content}\r\n--${boundary}--\r\n`;
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function eventually<T>(check: () => Promise<T>, what: string, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw new Error(`${what}: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe('console: passes, visitors, members and audit', function () {
  this.timeout(90_000);
  let stack: Stack;
  let orgId: number;
  let facilityId: number;
  let admin: { userId: number; email: string; password: string | null };
  let adminBrowser: Browser;
  let otherFacility: number;

  before(async () => {
    stack = await startStack({ label: 'console_hosts' });
    ({ orgId, facilityId } = await stack.seed.tenant());
    admin = await stack.seed.user(orgId, { roles: ['admin', 'self_invite'], firstName: 'Ada', lastName: 'Admin' });
    adminBrowser = await browserSignedInAgo(stack, { userId: admin.userId, orgId });
    const other = await stack.seed.tenant();
    otherFacility = other.facilityId;
  });
  after(async () => {
    await stack?.stop();
  });

  async function createPass(browser: Browser, fields: Record<string, string>) {
    const form = await browser.get('/passes/new');
    expect(form.status).to.equal(200);
    return browser.post('/passes/new', { csrf: csrfTokenOf(form.text), ...fields });
  }

  const today = () => new Date().toISOString().slice(0, 10);

  it('a host creates a pass with the usage before and after, sees it listed with its delivery, and revokes it after a confirmation', async () => {
    const host = await stack.seed.user(orgId, { roles: ['self_invite'], inviteAllowance: 3, firstName: 'Hal', lastName: 'Host' });
    const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    const form = await browser.get('/passes/new');
    expect(form.headers.get('cache-control')).to.equal('no-store');
    expect(form.text).to.match(/<strong>0<\/strong> used[\s\S]*<strong>3<\/strong> limit[\s\S]*<strong>3<\/strong> remaining/);
    const created = await createPass(browser, { first_name: 'Grace', last_name: 'Guest', email: 'grace@example.com', facility_id: String(facilityId), arrival_date: today(), arrival_time: '23:30', quantity: '2', notes: '' });
    expect(created.status, created.text).to.equal(201);
    expect(created.text).to.include('2 passes created');
    expect(created.text).to.match(/<strong>2<\/strong> used[\s\S]*<strong>1<\/strong> remaining/);
    const link = /href="(http[^"]+\/p\/[A-Za-z0-9_-]{32})"/.exec(created.text)?.[1];
    expect(link, 'the pass page link').to.be.a('string');

    // The event names the signed-in user.
    const event = (await stack.store.readAll({ maxCount: 10_000 })).filter((e) => e.type === 'PassCreated').at(-1)!;
    expect(event.metadata.actor).to.deep.equal({ kind: 'user', id: host.userId });

    const list = await browser.get('/passes');
    expect(list.text).to.include('Grace Guest');
    expect(list.text).to.include('Not requested'); // no SMS number was given
    const publicId = /href="\/passes\/(gst_[0-9a-f]{32})"/.exec(list.text)![1]!;
    const detail = await browser.get(`/passes/${publicId}`);
    expect(detail.text).to.include(link!);

    // 402 in words: two more do not fit in the one remaining.
    const refused = await createPass(browser, { first_name: 'Gus', email: 'gus@example.com', facility_id: String(facilityId), arrival_date: today(), quantity: '2' });
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include('<title>Error: Create a guest pass');
    expect(refused.text).to.include('Your monthly allowance is 3 passes and you have used 2, so 1 remains; this would need 2.');
    expect(refused.text).to.include('value="Gus"'); // the input is kept

    // Another organization's facility is not there (404 from the use case, shown on the field).
    const foreign = await createPass(browser, { first_name: 'Gus', email: 'gus@example.com', facility_id: String(otherFacility), arrival_date: today(), quantity: '1' });
    expect(foreign.status).to.equal(400);
    expect(foreign.text).to.match(/field-facility_id-error/);

    const confirm = await browser.get(`/passes/${publicId}/revoke`);
    expect(confirm.text).to.include('Its QR code stops opening doors at once.');
    const revoked = await browser.post(`/passes/${publicId}/revoke`, { csrf: csrfTokenOf(confirm.text), confirm: 'yes' });
    expect(revoked.status).to.equal(302);
    expect((await browser.get('/passes')).text).to.include('Revoked');
    const again = await browser.post(`/passes/${publicId}/revoke`, { csrf: csrfTokenOf(confirm.text), confirm: 'yes' });
    expect(again.status).to.equal(409);

    // Another host's pass is 404, as at the API.
    const otherHost = await stack.seed.user(orgId, { roles: ['self_invite'] });
    const otherBrowser = await browserSignedInAgo(stack, { userId: otherHost.userId, orgId });
    expect((await otherBrowser.get(`/passes/${publicId}`)).status).to.equal(404);
  });

  it('a user without self_invite gets the 403 page on /passes, a host who is not an admin on /settings pages and /visitors', async () => {
    const viewer = await stack.seed.user(orgId, { roles: ['employee_view'] });
    expect((await (await browserSignedInAgo(stack, { userId: viewer.userId, orgId })).get('/passes')).status).to.equal(403);
    const host = await stack.seed.user(orgId, { roles: ['self_invite'] });
    const browser = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    for (const path of ['/settings/members', '/settings/members/import', '/settings/audit', '/visitors']) {
      const page = await browser.get(path);
      expect(page.status, path).to.equal(403);
      expect(page.text).to.include('You do not have access to this page');
    }
  });

  it('the front desk sees a guest expected, then on site, then left, and on the on-site list while in', async () => {
    const created = await createPass(adminBrowser, { first_name: 'Vera', last_name: 'Visitor', email: 'vera@example.com', facility_id: String(facilityId), arrival_date: today(), arrival_time: '23:45', quantity: '1' });
    expect(created.status).to.equal(201);
    const row = await stack.db(READ_MODELS.passList).where({ org_id: orgId, first_name: 'Vera' }).first('pass_id', 'public_id', 'stream_name');
    const section = (text: string, caption: string) => text.slice(text.indexOf(caption), text.indexOf('</table>', text.indexOf(caption)));
    const desk = await adminBrowser.get(`/visitors?facility=${facilityId}`);
    expect(desk.headers.get('cache-control')).to.equal('no-store');
    expect(desk.text).to.include('data-live-every="10"');
    expect(section(desk.text, '>Expected<')).to.include('Vera Visitor');

    const scan = async (direction: 'entry' | 'exit') => {
      const now = new Date().toISOString();
      const ctx = { correlationId: randomUUID(), causationId: null, actor: { kind: 'system' as const, name: 'door-access-reactor' }, now: new Date() };
      const { position } = await stack.deps.handler.handle(
        row.stream_name,
        passDoorAccessDecider,
        {
          type: 'RecordDoorAccess',
          data: { accessId: randomUUID(), facilityId, controllerId: 'sim-1', door: 'Main', direction, result: 'granted', reason: null, publicId: row.public_id, passId: Number(row.pass_id), scannedAt: now, receivedAt: now },
        },
        ctx,
      );
      await stack.deps.watermark.waitFor(position, 5000, [READ_MODELS.frontDeskVisits]);
    };
    await scan('entry');
    const inside = await adminBrowser.get(`/visitors?facility=${facilityId}`);
    expect(section(inside.text, 'On site (checked in, not out)')).to.include('Vera Visitor');
    expect(section(inside.text, '>Expected<')).to.not.include('Vera Visitor');
    const evacuation = await adminBrowser.get(`/visitors/on-site?facility=${facilityId}`);
    expect(evacuation.text).to.include('Vera Visitor');
    await scan('exit');
    const left = await adminBrowser.get(`/visitors?facility=${facilityId}`);
    expect(section(left.text, '>Left<')).to.include('Vera Visitor');
    expect(section(left.text, 'On site (checked in, not out)')).to.not.include('Vera Visitor');
    expect((await adminBrowser.get(`/visitors/on-site?facility=${facilityId}`)).text).to.not.include('Vera Visitor');

    // Another organization's facility: 404.
    expect((await adminBrowser.get(`/visitors?facility=${otherFacility}`)).status).to.equal(404);
  });

  it('an admin adds, finds (by name and by whole email), edits, deactivates and reactivates a member', async () => {
    const form = await adminBrowser.get('/settings/members/new');
    const added = await adminBrowser.post('/settings/members/new', { csrf: csrfTokenOf(form.text), first_name: 'Mira', last_name: 'Member', email: 'mira.member@example.com', phone: '', job_title: 'Engineer', department: '' });
    expect(added.status, added.text).to.equal(302);
    const memberPath = added.location!.split('?')[0]!;
    const byName = await adminBrowser.get('/settings/members?search=mira');
    expect(byName.text).to.include('Mira Member');
    expect(byName.text, 'an admin sees contact fields').to.include('mira.member@example.com');
    expect((await adminBrowser.get('/settings/members?search=mira.member%40example.com')).text).to.include('Mira Member');

    const bad = await adminBrowser.post(`${memberPath}/edit`, { csrf: csrfTokenOf(form.text), first_name: 'Mira', last_name: 'Member', email: 'not an address', phone: '', job_title: '', department: '' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('field-email-error');
    expect((await adminBrowser.post(`${memberPath}/edit`, { csrf: csrfTokenOf(form.text), first_name: 'Mira', last_name: 'Member', email: 'mira@example.com', phone: '', job_title: 'Lead', department: '' })).status).to.equal(302);
    expect((await adminBrowser.get(memberPath)).text).to.include('Lead');

    expect((await adminBrowser.post(`${memberPath}/deactivate`, { csrf: csrfTokenOf(form.text) })).status).to.equal(302);
    expect((await adminBrowser.get('/settings/members?search=mira')).text).to.not.include('Mira Member');
    expect((await adminBrowser.get('/settings/members?search=mira&status=inactive')).text).to.include('Mira Member');
    expect((await adminBrowser.post(`${memberPath}/reactivate`, { csrf: csrfTokenOf(form.text) })).status).to.equal(302);
    expect((await adminBrowser.get('/settings/members?search=mira')).text).to.include('Mira Member');

    // Another organization's admin gets 404 for this member.
    const other = await stack.seed.tenant();
    const otherAdmin = await stack.seed.user(other.orgId, { roles: ['admin'] });
    expect((await (await browserSignedInAgo(stack, { userId: otherAdmin.userId, orgId: other.orgId })).get(memberPath)).status).to.equal(404);
  });

  it('erasing a member needs a recent sign-in and a confirmation; the audit log then shows nothing of them', async () => {
    const form = await adminBrowser.get('/settings/members/new');
    const added = await adminBrowser.post('/settings/members/new', { csrf: csrfTokenOf(form.text), first_name: 'Erin', last_name: 'Erased', email: 'erin.erased@example.com', phone: '', job_title: '', department: '' });
    const memberPath = added.location!.split('?')[0]!;

    const stale = await browserSignedInAgo(stack, { userId: admin.userId, orgId }, RECENT_AUTHENTICATION_SECONDS + 60);
    const refused = await stale.get(`${memberPath}/erase`);
    expect(refused.status).to.equal(403);
    expect(refused.text).to.include('Sign in again to continue');
    expect((await stale.post(`${memberPath}/erase`, { csrf: csrfTokenOf(refused.text), confirm: 'yes', what: 'all' })).status).to.equal(403);

    const confirm = await adminBrowser.get(`${memberPath}/erase`);
    expect(confirm.text).to.include('This cannot be undone.');
    const unchosen = await adminBrowser.post(`${memberPath}/erase`, { csrf: csrfTokenOf(confirm.text), confirm: 'yes' });
    expect(unchosen.status).to.equal(400);
    const erased = await adminBrowser.post(`${memberPath}/erase`, { csrf: csrfTokenOf(confirm.text), confirm: 'yes', what: 'all' });
    expect(erased.status).to.equal(302);
    const page = await adminBrowser.get(memberPath);
    expect(page.text).to.include('Erased member');
    expect(page.text).to.not.include('erin.erased@example.com');

    const audit = await adminBrowser.get('/settings/audit?kind=members');
    expect(audit.status).to.equal(200);
    expect(audit.headers.get('cache-control')).to.equal('no-store');
    expect(audit.text).to.include('Member erased');
    expect(audit.text).to.include('An erased member');
    expect(audit.text).to.not.include('Erin');
    expect(audit.text).to.not.include('erin.erased');
    // Who: the acting admin by name and email.
    expect(audit.text).to.include(`Ada Admin (${admin.email})`);
    const all = await adminBrowser.get('/settings/audit');
    expect(all.text).to.include('Pass created');
    expect(all.text).to.include('The service operator'); // the seeded tenant
  });

  it('imports a CSV uploaded as a plain form, shows its progress and reports the rejected rows', async () => {
    const page = await adminBrowser.get('/settings/members/import');
    expect(page.text).to.include('enctype="multipart/form-data"');
    const rows = ['first_name,last_name,email'];
    for (let i = 1; i <= 50; i++) rows.push(`Imp${i},Orter,imp${i}@example.com`);
    rows.push('Bad,Row,not-an-address');
    const { body, type } = multipart({ csrf: csrfTokenOf(page.text) }, { name: 'file', filename: 'people.csv', content: rows.join('\r\n') });
    const noCsrf = multipart({}, { name: 'file', filename: 'people.csv', content: rows.join('\n') });
    expect((await adminBrowser.request('POST', '/settings/members/import', { body: noCsrf.body, headers: { 'Content-Type': noCsrf.type } })).status).to.equal(403);
    const started = await adminBrowser.request('POST', '/settings/members/import', { body, headers: { 'Content-Type': type } });
    expect(started.status, started.text).to.equal(302);
    const progressPath = started.location!;
    const done = await eventually(async () => {
      const progress = await adminBrowser.get(progressPath);
      expect(progress.text).to.include('Import finished');
      return progress;
    }, 'the import finishes');
    expect(done.text).to.match(/<strong>51<\/strong> rows read/);
    expect(done.text).to.match(/<strong>50<\/strong> added/);
    expect(done.text).to.match(/<strong>1<\/strong> rejected/);
    expect(done.text).to.include('Rejected rows');
    expect(done.text).to.not.include('data-live-every');
    expect((await adminBrowser.get('/settings/members?search=imp17')).text).to.include('Imp17 Orter');
    // Another organization cannot watch it.
    const other = await stack.seed.tenant();
    const otherAdmin = await stack.seed.user(other.orgId, { roles: ['admin'] });
    expect((await (await browserSignedInAgo(stack, { userId: otherAdmin.userId, orgId: other.orgId })).get(progressPath)).status).to.equal(404);
  });
});
