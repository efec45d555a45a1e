// At-least-once delivery across a crash: the whole service (npm start's entry point, as a child
// process) is killed with SIGKILL while messages are in flight and started again. Every batch is
// then delivered, each recorded once, and no message reaches its provider more than twice (the
// one repeat the guarantee allows: accepted by the provider, not yet recorded when killed).
import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../../shared/db/embedded-postgres.js';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { startChild, type Child } from '../support/child-process.js';
import { startLocalSmsWebhook, startLocalSmtp, type LocalSmsWebhook, type LocalSmtp } from './local-providers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('pass delivery across a crash of the whole service (SIGKILL)', function () {
  this.timeout(120_000);
  let smtp: LocalSmtp;
  let sms: LocalSmsWebhook;
  let dataDir: string;
  let databaseUrl: string;
  let db: Knex;
  const children: Child[] = [];

  before(async () => {
    [smtp, sms] = await Promise.all([startLocalSmtp(), startLocalSmsWebhook()]);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-delivery-crash-'));
    databaseUrl = await migratedDatabaseUrl('delivery-crash');
    db = createKnex(databaseUrl, { max: 2 });
  });

  after(async () => {
    for (const child of children) await child.kill();
    await db?.destroy();
    await Promise.all([smtp?.close(), sms?.close()]);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers every batch once recorded, and sends no message more than twice', async () => {
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      GUESTPASS_DATA_DIR: dataDir,
      SMTP_URL: smtp.url,
      SMS_URL: sms.url,
      LOG_LEVEL: 'warn',
    };
    const first = await startChild(path.join(root, 'runtime/embedded.ts'), env, { ready: 'Operator CLI' });
    children.push(first);
    const apiKey = /(svc_sk_[A-Za-z0-9_-]+)/.exec(first.output())?.[1];
    expect(apiKey, first.output()).to.be.a('string');
    const baseUrl = `http://127.0.0.1:${port}`;
    const auth = { Authorization: `Bearer ${apiKey}` };
    const facilities = (await (await fetch(`${baseUrl}/api/v1/org/facilities`, { headers: auth })).json()) as { facilities: Array<{ id: number }> };
    const facilityId = facilities.facilities[0]!.id;

    // Creates in flight, each guest with both channels; the kill lands among them, once a few
    // have been answered (so their messages are surely sent or being sent).
    let answered = 0;
    let inFlight = 0;
    let killed: Promise<void> | null = null;
    const creates: Array<Promise<number>> = [];
    const sendUntil = Date.now() + 30_000;
    for (let i = 0; !killed && Date.now() < sendUntil; i++) {
      if (inFlight >= 12) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      inFlight++;
      creates.push(
        fetch(`${baseUrl}/api/v1/org/passes`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ first_name: `Guest ${i}`, email: `crash-${i}@example.com`, phone: `+49151${String(i).padStart(6, '0')}`, arrival_date: '2030-01-02', facility_id: facilityId }),
        }).then(
          (r) => {
            inFlight--;
            if (r.status === 201 && ++answered === 5) killed = first.kill();
            return r.status;
          },
          () => {
            inFlight--;
            return 0;
          },
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    expect(killed, 'five creates answered before the kill').not.to.equal(null);
    await killed;
    const statuses = await Promise.all(creates);

    const second = await startChild(path.join(root, 'runtime/embedded.ts'), env, { ready: 'Operator CLI' });
    children.push(second);
    // Every batch in the log is delivered on both channels, by the restarted service.
    const deadline = Date.now() + 60_000;
    let batches: Array<{ batch_id: string; email_delivery: string | null; sms_delivery: string | null }> = [];
    for (;;) {
      batches = await db('pass_batches').select('batch_id', 'email_delivery', 'sms_delivery');
      if (batches.length > 0 && batches.every((b) => b.email_delivery === 'sent' && b.sms_delivery === 'sent')) break;
      if (Date.now() > deadline) throw new Error(`not delivered in time: ${JSON.stringify(batches)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(batches.length).to.be.at.least(statuses.filter((s) => s === 201).length);

    // One success recorded per batch and channel.
    const recorded = await db('events').where({ type: 'PassDeliverySucceeded' }).select('data');
    expect(recorded).to.have.length(batches.length * 2);
    // Every batch's email arrived, none more than twice; the same for the SMS.
    const mails = new Map<string, number>();
    for (const mail of smtp.received) mails.set(mail.messageId!, (mails.get(mail.messageId!) ?? 0) + 1);
    expect(mails.size).to.equal(batches.length);
    expect(Math.max(...mails.values())).to.be.at.most(2);
    const texts = new Map<string, number>();
    for (const text of sms.accepted) texts.set(text.idempotencyKey, (texts.get(text.idempotencyKey) ?? 0) + 1);
    expect(texts.size).to.equal(batches.length);
    expect(Math.max(...texts.values())).to.be.at.most(2);
    await second.kill();
  });
});
