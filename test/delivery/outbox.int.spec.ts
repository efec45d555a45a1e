import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main, type Io } from '../../cli/guestpass.js';
import { createDeliverySenders } from '../../shared/delivery/create-senders.js';
import { findPart, parseMimeMessage } from '../../shared/delivery/mime-reader.js';
import { OutboxFolder, OutboxMailSender, OutboxSmsSender, listOutbox, outboxDir } from '../../shared/delivery/outbox.js';
import { composePassEmail, composePassSms, defaultMailFrom, type PassMessageContent } from '../../shared/delivery/pass-message.js';

const BIN = fileURLToPath(new URL('../../bin/guestpass.js', import.meta.url));
const BASE = 'http://127.0.0.1:8080';
const BATCH = '0b7f6c1e-5d2a-4c3b-9e8f-112233445566';
const LINK = `${BASE}/p/tok_AbC-123_xyz`;

const CONTENT: PassMessageContent = {
  batchId: BATCH,
  guestFirstName: 'Ada',
  facilityName: 'Main entrance',
  arrivalDate: '2026-12-01',
  arrivalTime: '09:30',
  timeZone: 'UTC',
  validFrom: '2026-12-01T09:30:00.000Z',
  validUntil: '2026-12-01T18:00:00.000Z',
  invitedBy: null,
  passLink: LINK,
  passCount: 1,
};
const MAIL = composePassEmail(CONTENT, 'ada@example.com', { from: defaultMailFrom(BASE), publicBaseUrl: BASE });
const SMS = composePassSms(CONTENT, '+15551234567', { publicBaseUrl: BASE });

/** A clock that returns the given instants in turn. */
function clock(...isos: string[]) {
  let i = 0;
  return () => new Date(isos[Math.min(i++, isos.length - 1)]!);
}

/** Runs `npx guestpass` as its own process, killed if it has not ended within 30 s. */
function guestpass(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('outbox (files in the data folder) and `guestpass outbox list`', function () {
  this.timeout(60_000);
  let dataDir: string;
  let dir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-outbox-'));
    dir = outboxDir(dataDir);
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('writes an email as a real .eml and an SMS as .json, private, with no temporary file left', async () => {
    const folder = new OutboxFolder(dir, clock('2026-11-26T00:41:34.123Z', '2026-11-26T00:41:35.000Z'));
    const mailReceipt = await new OutboxMailSender(folder).send(MAIL);
    const smsReceipt = await new OutboxSmsSender(folder).send(SMS);
    expect(mailReceipt.providerMessageId).to.equal(`2026-11-26T00-41-34.123Z-${BATCH}-email.eml`);
    expect(smsReceipt.providerMessageId).to.equal(`2026-11-26T00-41-35.000Z-${BATCH}-sms.json`);
    expect((await readdir(dir)).sort()).to.deep.equal([mailReceipt.providerMessageId, smsReceipt.providerMessageId]);

    const message = parseMimeMessage(await readFile(path.join(dir, mailReceipt.providerMessageId!)));
    expect(message.contentType).to.equal('multipart/alternative');
    expect(message.header('to')).to.equal('ada@example.com');
    expect(message.header('message-id')).to.equal(`<pass-${BATCH}@127.0.0.1>`);
    expect(findPart(message, 'text/plain')!.text).to.include(LINK);
    expect(findPart(message, 'text/html')!.text).to.include(`href="${LINK}"`);

    expect(JSON.parse(await readFile(path.join(dir, smsReceipt.providerMessageId!), 'utf8'))).to.deep.equal({
      to: '+15551234567',
      text: SMS.text,
      link: LINK,
      idempotency_key: `pass-${BATCH}-sms`,
      created_at: '2026-11-26T00:41:35.000Z',
    });
    if (process.platform !== 'win32') {
      for (const name of await readdir(dir)) expect((await stat(path.join(dir, name))).mode & 0o777).to.equal(0o600);
      expect((await stat(dir)).mode & 0o777).to.equal(0o700);
    }
  });

  it('gives messages of the same millisecond distinct names that still sort by time', async () => {
    const folder = new OutboxFolder(dir, () => new Date('2026-11-26T00:41:34.123Z'));
    const sender = new OutboxMailSender(folder);
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await sender.send(MAIL)).providerMessageId);
    expect(new Set(names).size).to.equal(3);
    expect([...names].sort()).to.deep.equal(names);
  });

  it('lists the latest messages newest first, with recipient, subject or text, and the pass link', async () => {
    const folder = new OutboxFolder(dir, clock('2026-11-26T10:00:00.000Z', '2026-11-26T10:00:01.000Z', '2026-11-26T10:00:02.000Z'));
    await new OutboxMailSender(folder).send(MAIL);
    await new OutboxSmsSender(folder).send(SMS);
    await new OutboxMailSender(folder).send({ ...MAIL, to: 'grace@example.com' });
    await writeFile(path.join(dir, 'README.txt'), 'not a message');
    await writeFile(path.join(dir, `2026-11-26T10-00-03.000Z-${BATCH}-sms.json`), '{not json');

    const all = await listOutbox(dir, 10);
    expect(all.map((e) => [e.channel, e.to, e.createdAt])).to.deep.equal([
      ['email', 'grace@example.com', '2026-11-26T10:00:02.000Z'],
      ['sms', '+15551234567', '2026-11-26T10:00:01.000Z'],
      ['email', 'ada@example.com', '2026-11-26T10:00:00.000Z'],
    ]);
    expect(all.map((e) => e.link)).to.deep.equal([LINK, LINK, LINK]);
    expect(all[0]!.subject).to.equal('Your guest pass for Main entrance');
    expect(all[1]).to.include({ subject: null, text: SMS.text });
    expect(all[0]!.file).to.equal(path.join(dir, `2026-11-26T10-00-02.000Z-${BATCH}-email.eml`));

    expect((await listOutbox(dir, 2)).map((e) => e.createdAt)).to.deep.equal(['2026-11-26T10:00:02.000Z', '2026-11-26T10:00:01.000Z']);
    expect(await listOutbox(path.join(dataDir, 'missing'), 10)).to.deep.equal([]);
  });

  it('records the link the service sent, never a URL found in the text a pass creator typed', async () => {
    // A name that looks like a pass link (the create refuses it now; the outbox must not rely on that).
    const phishing = 'http://evil.example/p/phish';
    const folder = new OutboxFolder(dir, clock('2026-11-26T10:00:00.000Z', '2026-11-26T10:00:01.000Z'));
    await new OutboxMailSender(folder).send({ ...MAIL, text: `Hello ${phishing},\n${MAIL.text}`, html: `<p>Hello ${phishing},</p>${MAIL.html}` });
    await new OutboxSmsSender(folder).send({ ...SMS, text: `${phishing} ${SMS.text}` });
    const entries = await listOutbox(dir, 10);
    expect(entries.map((e) => e.link)).to.deep.equal([LINK, LINK]);
    // The .eml still opens as the message SMTP would carry, with the link in a header of its own.
    const eml = parseMimeMessage(await readFile(entries[1]!.file));
    expect(eml.header('x-outbox-link')).to.equal(LINK);
    expect(eml.header('message-id')).to.equal(MAIL.messageId);
  });

  it('is what createDeliverySenders picks when no SMTP_URL or SMS provider is set, and says where', async () => {
    const senders = createDeliverySenders({ mail: null, sms: null, dataDir, publicBaseUrl: null }, BASE);
    expect([senders.mail.kind, senders.sms.kind]).to.deep.equal(['outbox', 'outbox']);
    expect(senders.mailFrom).to.equal('Guest Pass <no-reply@127.0.0.1>');
    expect(senders.describe()).to.equal(`mail: outbox ${dir}; sms: outbox ${dir}`);
    await senders.mail.send(MAIL);
    await senders.sms.send(SMS);
    expect(await listOutbox(dir, 10)).to.have.length(2);
  });

  it('prints the listing through the CLI, as text and as JSON, without a database', async () => {
    const folder = new OutboxFolder(dir, clock('2026-11-26T10:00:00.000Z', '2026-11-26T10:00:01.000Z'));
    await new OutboxMailSender(folder).send(MAIL);
    await new OutboxSmsSender(folder).send(SMS);
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l) };
    const env = { GUESTPASS_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };

    expect(await main(['outbox', 'list'], io, env), err.join('\n')).to.equal(0);
    const text = out.join('\n');
    expect(text).to.match(/^2026-11-26T10:00:01.000Z {2}sms {4}\+15551234567 {2}Guest pass for Main entrance/);
    expect(text).to.include('ada@example.com  Your guest pass for Main entrance');
    expect(text).to.include(`  ${LINK}`);

    out.length = 0;
    expect(await main(['outbox', 'list', '--limit', 'none', '--json'], io, env)).to.equal(2);
    expect(JSON.parse(out.at(-1)!)).to.deep.include({ error: 'usage' });

    const run = await guestpass({ GUESTPASS_DATA_DIR: dataDir }, ['outbox', 'list', '--limit', '1', '--json']);
    expect(run.code, run.stderr).to.equal(0);
    const listing = JSON.parse(run.stdout) as { dir: string; messages: Array<Record<string, unknown>> };
    expect(listing.dir).to.equal(dir);
    expect(listing.messages).to.deep.equal([
      {
        created_at: '2026-11-26T10:00:01.000Z',
        channel: 'sms',
        to: '+15551234567',
        subject: null,
        text: SMS.text,
        link: LINK,
        file: path.join(dir, `2026-11-26T10-00-01.000Z-${BATCH}-sms.json`),
      },
    ]);
  });
});
