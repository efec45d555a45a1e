// Pass delivery end to end: the running service (stack) creates passes over HTTP, its delivery
// reactor and worker send through a real SMTP server (smtp-server) and a real SMS webhook on
// 127.0.0.1, and the outcome shows in the 201, the listings and the batch's delivery stream.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { startLocalSmsWebhook, startLocalSmtp, type LocalSmsWebhook, type LocalSmtp } from './local-providers.js';
import { SmtpMailSender } from '../../shared/delivery/smtp-mail-sender.js';
import { SmsWebhookSender } from '../../shared/delivery/sms-webhook-sender.js';
import { streams } from '../../shared/domain/events.js';
import { rebuildProjections } from '../../projections/rebuild.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { startPassDelivery } from '../../projections/pass-delivery.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { freePort } from '../../shared/db/embedded-postgres.js';

/** Polls `check` until it returns a value, for at most `ms`. */
async function eventually<T>(check: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function uniqueGuest() {
  const tag = randomUUID().slice(0, 8);
  const digits = String(Math.floor(Math.random() * 1e9)).padStart(9, '0');
  return { email: `guest-${tag}@example.com`, phone: `+4915${digits}` };
}

describe('pass delivery (SMTP and an SMS webhook, end to end)', function () {
  this.timeout(60_000);
  let smtp: LocalSmtp;
  let sms: LocalSmsWebhook;
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    [smtp, sms] = await Promise.all([startLocalSmtp(), startLocalSmsWebhook()]);
    stack = await startStack({
      label: 'delivery',
      delivery: {
        mail: new SmtpMailSender(smtp.url),
        sms: new SmsWebhookSender({ url: sms.url, authToken: 'test-token' }),
        waitMs: 5000,
        pollIntervalMs: 100,
      },
    });
    tenant = await stack.seed.tenant();
  });

  after(async () => {
    await stack?.stop();
    await Promise.all([smtp?.close(), sms?.close()]);
  });

  beforeEach(() => {
    smtp.refuse = () => null;
    sms.status = () => 200;
  });

  const mailsTo = (address: string) => smtp.received.filter((m) => m.to.includes(address));
  const smsTo = (phone: string) => sms.accepted.filter((m) => m.to === phone);

  /** Another projections process beside the stack's: a runner (hosting the delivery scheduler) and a worker. */
  async function secondProjectionsProcess(): Promise<{ stop(): Promise<void> }> {
    const runner = new ProjectionRunner({ knex: stack.db, store: stack.store, subjectKeys: stack.deps.subjectKeys, logger: stack.logger });
    await runner.start();
    const delivery = await startPassDelivery({
      knex: stack.db,
      store: stack.store,
      handler: stack.deps.handler,
      subjectKeys: stack.deps.subjectKeys,
      senders: { mail: new SmtpMailSender(smtp.url), sms: new SmsWebhookSender({ url: sms.url, authToken: null }), mailFrom: 'x@example.test' },
      baseUrl: stack.baseUrl,
      pollIntervalMs: 100,
    });
    return {
      stop: async () => {
        await delivery.stop();
        await runner.stop();
      },
    };
  }

  async function create(guest: { email?: string; phone?: string }, quantity = 1, headers: Record<string, string> = {}) {
    const res = await stack.request('POST', '/api/v1/org/passes', {
      apiKey: tenant.apiKey,
      json: passBody(tenant.facilityId, { first_name: 'Ada', email: guest.email ?? null, phone: guest.phone ?? null, quantity, invited_by: 'Grace at reception' }),
      headers,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body as { public_id: string; qr_sent: boolean; sms_sent: boolean; pass_link: string; qr_values: string[] };
  }

  async function deliveryOf(publicId: string) {
    const list = await stack.request('GET', '/api/v1/org/passes?limit=100', { apiKey: tenant.apiKey });
    return (list.body.items as Array<{ public_id: string; delivery?: unknown }>).find((p) => p.public_id === publicId)?.delivery;
  }

  it('sends one email and one SMS for a batch of one, and the 201 and the listing say so', async () => {
    const guest = uniqueGuest();
    const body = await create(guest);
    expect(body.qr_sent).to.equal(true);
    expect(body.sms_sent).to.equal(true);
    expect(body.pass_link).to.match(new RegExp(`^${stack.baseUrl}/p/[A-Za-z0-9_-]{32}$`));

    const [mail] = mailsTo(guest.email);
    expect(mailsTo(guest.email)).to.have.length(1);
    expect(mail!.raw).to.include('Content-Type: text/plain').and.to.include('Content-Type: text/html');
    expect(mail!.raw).to.include(body.pass_link);
    expect(mail!.messageId).to.match(/^<pass-[0-9a-f-]{36}@127\.0\.0\.1>$/);
    expect(smsTo(guest.phone)).to.have.length(1);
    expect(smsTo(guest.phone)[0]!.text).to.include(body.pass_link);
    expect(await deliveryOf(body.public_id)).to.deep.equal({ email: 'sent', sms: 'sent' });
  });

  it('sends exactly one email and one SMS for a batch of ten, carrying one link', async () => {
    const guest = uniqueGuest();
    const body = await create(guest, 10);
    expect(body.qr_values).to.have.length(10);
    expect(body.qr_sent && body.sms_sent).to.equal(true);
    expect(mailsTo(guest.email)).to.have.length(1);
    expect(smsTo(guest.phone)).to.have.length(1);
    expect(mailsTo(guest.email)[0]!.raw).to.include('10 passes');
    // None of the QR values travels in a message: the page shows them.
    for (const qr of body.qr_values) expect(mailsTo(guest.email)[0]!.raw).not.to.include(qr);
  });

  it('answers a repeat of the same request (its X-Request-Id) with the batch\'s delivery, and sends nothing again', async () => {
    const guest = uniqueGuest();
    const headers = { 'X-Request-Id': `again-${randomUUID()}` };
    const first = await create(guest, 1, headers);
    expect(first.qr_sent && first.sms_sent).to.equal(true);
    const again = await create(guest, 1, headers);
    expect(again).to.deep.equal(first);
    expect(mailsTo(guest.email)).to.have.length(1);
    expect(smsTo(guest.phone)).to.have.length(1);
  });

  it('sends only the channel the guest gave an address for', async () => {
    const guest = uniqueGuest();
    const body = await create({ phone: guest.phone });
    expect(body.qr_sent).to.equal(false);
    expect(body.sms_sent).to.equal(true);
    expect(await deliveryOf(body.public_id)).to.deep.equal({ email: null, sms: 'sent' });
  });

  it('records a recipient the SMTP server refuses as failed at once: 201 with qr_sent false', async () => {
    const guest = uniqueGuest();
    smtp.refuse = (address) => (address === guest.email ? { code: 550, message: 'no such user' } : null);
    const body = await create(guest);
    expect(body.qr_sent).to.equal(false);
    expect(body.sms_sent).to.equal(true);
    expect(await deliveryOf(body.public_id)).to.deep.equal({ email: 'failed', sms: 'sent' });
    const batchId = (await stack.db(READ_MODELS.passList).where({ public_id: body.public_id }).first('batch_id')).batch_id as string;
    const events = await stack.store.readStream(streams.passDelivery(batchId));
    const failed = events.find((e) => e.type === 'PassDeliveryFailed');
    expect(failed?.data).to.include({ channel: 'email', attempt: 1, errorClass: 'recipient_refused', final: true });
    // No recipient in the log.
    expect(JSON.stringify(events.map((e) => [e.data, e.metadata]))).not.to.include(guest.email).and.not.to.include(guest.phone);
  });

  it('tries an SMS provider outage again and records each attempt', async () => {
    const guest = uniqueGuest();
    let refusals = 0;
    sms.status = (_n, message) => (message.to === guest.phone && refusals++ < 1 ? 503 : 200);
    const body = await create(guest);
    // The retry after about a second lands within DELIVERY_WAIT_MS.
    expect(body.sms_sent).to.equal(true);
    expect(sms.requests.filter((m) => m.to === guest.phone)).to.have.length(2);
    expect(smsTo(guest.phone)).to.have.length(1);
    const batchId = (await stack.db(READ_MODELS.passList).where({ public_id: body.public_id }).first('batch_id')).batch_id as string;
    const events = (await stack.store.readStream(streams.passDelivery(batchId))).filter((e) => (e.data as { channel: string }).channel === 'sms');
    expect(events.map((e) => [e.type, (e.data as { attempt: number }).attempt])).to.deep.equal([
      ['PassDeliveryFailed', 1],
      ['PassDeliverySucceeded', 2],
    ]);
    expect(events[0]!.data).to.include({ errorClass: 'provider_unavailable', final: false });
  });

  it('sends each batch once while a second projections process (runner and worker) runs beside', async () => {
    const second = await secondProjectionsProcess();
    try {
      const guests = Array.from({ length: 12 }, () => uniqueGuest());
      const bodies = await Promise.all(guests.map((guest) => create(guest)));
      const batchIds = await Promise.all(
        bodies.map(async (b) => (await stack.db(READ_MODELS.passList).where({ public_id: b.public_id }).first('batch_id')).batch_id as string),
      );
      await eventually(async () => {
        const done = await stack.db('pass_delivery_jobs').whereIn('batch_id', batchIds).where({ done: true }).count<{ count: string }[]>('* as count');
        return Number(done[0]!.count) === batchIds.length;
      });
      for (const guest of guests) {
        expect(mailsTo(guest.email)).to.have.length(1);
        expect(sms.requests.filter((m) => m.to === guest.phone)).to.have.length(1);
      }
      for (const batchId of batchIds) {
        const events = await stack.store.readStream(streams.passDelivery(batchId));
        expect(events.map((e) => `${e.type} ${(e.data as { channel: string }).channel}`).sort()).to.deep.equal(['PassDeliverySucceeded email', 'PassDeliverySucceeded sms']);
      }
    } finally {
      await second.stop();
    }
  });

  it('sends nothing again when the log is scheduled again from its start, nor after a rebuild', async () => {
    const guest = uniqueGuest();
    await create(guest, 2);
    const mails = smtp.received.length;
    const texts = sms.requests.length;
    // A replay: the work list lost and the scheduler's checkpoint reset to the start of the log.
    await stack.db('pass_delivery_jobs').del();
    await stack.db('forwarder_checkpoints').where({ name: 'pass-delivery' }).del();
    // A second runner (hosting the scheduler) and worker, as a restarted projections process would run them.
    const replay = await secondProjectionsProcess();
    try {
      await eventually(async () => {
        const left = await stack.db('pass_delivery_jobs').where({ done: false }).count<{ count: string }[]>('* as count');
        const all = await stack.db('pass_delivery_jobs').count<{ count: string }[]>('* as count');
        return Number(all[0]!.count) > 0 && Number(left[0]!.count) === 0;
      });
    } finally {
      await replay.stop();
    }
    await rebuildProjections(undefined, { knex: stack.db, store: stack.store, subjectKeys: stack.deps.subjectKeys, logger: stack.logger });
    expect(smtp.received.length).to.equal(mails);
    expect(sms.requests.length).to.equal(texts);
  });
});

describe('pass delivery while the providers are down', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    // Nothing listens on these ports: every attempt fails at once, as a transient failure.
    const closed = await freePort();
    stack = await startStack({
      label: 'delivery-down',
      delivery: {
        mail: new SmtpMailSender(`smtp://127.0.0.1:${closed}`),
        sms: new SmsWebhookSender({ url: `http://127.0.0.1:${closed}/sms`, authToken: null }),
        waitMs: 300,
        pollIntervalMs: 100,
      },
    });
    tenant = await stack.seed.tenant();
  });

  after(() => stack?.stop());

  it('answers the create with nothing sent, and the pass shows its delivery pending while retries go on', async () => {
    const guest = uniqueGuest();
    const res = await stack.request('POST', '/api/v1/org/passes', {
      apiKey: tenant.apiKey,
      json: passBody(tenant.facilityId, { email: guest.email, phone: guest.phone }),
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ qr_sent: false, sms_sent: false });
    const batchId = (await stack.db(READ_MODELS.passList).where({ public_id: res.body.public_id }).first('batch_id')).batch_id as string;
    const failures = await eventually(async () => {
      const events = await stack.store.readStream(streams.passDelivery(batchId));
      return events.length === 2 ? events : null;
    });
    for (const event of failures) expect(event.data).to.include({ attempt: 1, errorClass: 'provider_unavailable', final: false });
    const job = await stack.db('pass_delivery_jobs').where({ batch_id: batchId }).first();
    expect(job.done).to.equal(false);
    expect(new Date(job.next_attempt_at).getTime()).to.be.greaterThan(Date.now() - 1000);
    const list = await stack.request('GET', '/api/v1/org/passes', { apiKey: tenant.apiKey });
    expect(list.body.items.find((p: { public_id: string }) => p.public_id === res.body.public_id).delivery).to.deep.equal({ email: 'pending', sms: 'pending' });
  });
});
