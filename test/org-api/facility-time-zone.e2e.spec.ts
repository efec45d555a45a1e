// A pass at a facility with an IANA zone, end to end through POST /api/v1/org/passes: its window
// is the arrival day in the facility's zone, and what the guest receives (email and SMS in the
// outbox folder) and the pass page and its calendar file show local times with the zone's name.
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { addFacility } from '../../command-service/facilities/add-facility.js';
import { OutboxMailSender, OutboxSmsSender, listOutbox } from '../../shared/delivery/outbox.js';
import { findPart, parseMimeMessage } from '../../shared/delivery/mime-reader.js';
import type { PassCreated } from '../../shared/domain/events.js';

// A winter day far ahead: Berlin is on CET (+01:00) then, so local midnight is 23:00 UTC the day before.
const DAY = '2099-01-15';

describe('organization API: a pass at a Europe/Berlin facility', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;
  let facilityId: number;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'guestpass-tz-outbox-'));
    stack = await startStack({ label: 'org_tz', delivery: { mail: new OutboxMailSender(dir), sms: new OutboxSmsSender(dir), pollIntervalMs: 100 } });
    tenant = await stack.seed.tenant();
    const ctx = { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' as const }, now: new Date() };
    ({ facilityId } = await addFacility(stack.deps, { orgId: tenant.orgId, name: 'Berlin office', description: null, timeZone: 'Europe/Berlin' }, ctx));
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const create = (body: Record<string, unknown>) => stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: body });

  async function createdEvent(publicId: string): Promise<PassCreated['data']> {
    const event = (await stack.store.readAll()).find((e) => e.type === 'PassCreated' && (e.data as PassCreated['data']).publicId === publicId);
    if (!event) throw new Error(`no PassCreated for ${publicId}`);
    return event.data as PassCreated['data'];
  }

  async function outboxOf(link: string) {
    const entries = (await listOutbox(dir, 100)).filter((e) => e.link === link);
    const email = entries.find((e) => e.channel === 'email');
    const sms = entries.find((e) => e.channel === 'sms');
    if (!email || !sms) throw new Error(`expected an email and an SMS in the outbox for the pass, found ${entries.length} messages`);
    const text = findPart(parseMimeMessage(await readFile(email.file)), 'text/plain')?.text ?? '';
    return { emailText: text.replace(/\r\n/g, '\n'), smsText: sms.text ?? '' };
  }

  it('gives a pass without arrival_time the local day: validFrom is local midnight, and the guest reads local times', async () => {
    const res = await create(passBody(facilityId, { arrival_date: DAY, phone: '+49 151 2345678' }));
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ qr_sent: true, sms_sent: true });
    const data = await createdEvent(res.body.public_id);
    expect(data).to.include({ arrivalDate: DAY, arrivalTime: null, validFrom: '2099-01-14T23:00:00.000Z', validUntil: '2099-01-15T22:59:59.999Z' });

    const { emailText } = await outboxOf(res.body.pass_link);
    expect(emailText).to.include('Valid: from Thursday 15 January 2099, 00:00 Europe/Berlin until Thursday 15 January 2099, 23:59 Europe/Berlin');
    expect(emailText).to.not.include('UTC');

    const page = await stack.request('GET', new URL(res.body.pass_link).pathname);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('15 January 2099 at 00:00 Europe/Berlin').and.include('15 January 2099 at 23:59 Europe/Berlin');
    expect(page.text).to.not.include(' UTC');
  });

  it('reads arrival_time as Berlin wall-clock time, in the window, the email, the SMS, the page and the calendar file', async () => {
    const res = await create(passBody(facilityId, { arrival_date: DAY, arrival_time: '09:30', access_until: `${DAY}T18:00`, phone: '+49 151 2345678' }));
    expect(res.status).to.equal(201);
    const data = await createdEvent(res.body.public_id);
    expect(data).to.include({ arrivalTime: '09:30', validFrom: '2099-01-15T08:30:00.000Z', validUntil: '2099-01-15T17:00:00.000Z' });

    const { emailText, smsText } = await outboxOf(res.body.pass_link);
    expect(emailText).to.include('Arrival: Thursday 15 January 2099 at 09:30 Europe/Berlin');
    expect(emailText).to.include('until Thursday 15 January 2099, 18:00 Europe/Berlin');
    expect(smsText).to.include(`on ${DAY} 09:30 Europe/Berlin:`);

    const pagePath = new URL(res.body.pass_link).pathname;
    const page = await stack.request('GET', pagePath);
    expect(page.text).to.include('<time datetime="09:30">09:30</time> Europe/Berlin');
    const ics = await stack.request('GET', `${pagePath}/calendar.ics`);
    expect(ics.status).to.equal(200);
    expect(ics.text).to.include('DTSTART:20990115T083000Z');
    expect(ics.text.replace(/\r\n /g, '')).to.include(`Arrival: ${DAY} 09:30 Europe/Berlin.`);
  });

  it('keeps an access_until with an offset as given', async () => {
    const res = await create(passBody(facilityId, { arrival_date: DAY, access_until: `${DAY}T18:00Z` }));
    expect(res.status).to.equal(201);
    expect((await createdEvent(res.body.public_id)).validUntil).to.equal('2099-01-15T18:00:00.000Z');
  });
});
