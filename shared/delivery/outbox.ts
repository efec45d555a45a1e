// The embedded default of both channels: each message becomes a file in `{dataDir}/outbox/`, for
// a developer to open (`.eml` in a mail client) or list (`npx guestpass outbox list`).
//
//   2026-11-26T00-41-34.123Z-{batchId}-email.eml   the RFC 5322 message as SMTP would carry it, with
//                                                  an X-Outbox-Link header naming the page it leads to
//   2026-11-26T00-41-34.124Z-{batchId}-sms.json    {"to", "text", "link", "idempotency_key", "created_at"}
//
// The link is the one the service put there, recorded beside the message: never scanned from the
// text, which carries what a pass creator typed (a name could hold a URL that looks like ours).
//
// Names sort by time (one folder's stamps never repeat within a process); each file is written
// under a temporary name in the same folder and renamed, so a reader never sees half a message.
// Mode 0600 in a 0700 folder: the files hold guests' addresses and their pass links.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { DeliveryFailure, type MailSender, type OutgoingMail, type OutgoingSms, type SendReceipt, type SmsSender } from './delivery-ports.js';
import { parseMimeMessage } from './mime-reader.js';
import { renderRawMail } from './raw-mail.js';

export type OutboxChannel = 'email' | 'sms';

export interface OutboxEntry {
  /** Absolute path of the message's file. */
  readonly file: string;
  readonly channel: OutboxChannel;
  readonly to: string;
  /** The email's subject; null for an SMS. */
  readonly subject: string | null;
  /** The SMS's text; null for an email (open the file for it). */
  readonly text: string | null;
  /** The page the message leads to (the pass page), as recorded when it was written. */
  readonly link: string | null;
  /** When the message was written (ISO 8601, from the file name). */
  readonly createdAt: string;
}

export function outboxDir(dataDir: string): string {
  return path.join(dataDir, 'outbox');
}

const FILE_NAME = /^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z)-[A-Za-z0-9-]+-(email\.eml|sms\.json)$/;

/** One outbox folder: hands out file names whose time stamps strictly increase. */
export class OutboxFolder {
  private lastMs = 0;

  constructor(
    readonly dir: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Writes a message atomically and returns its file's name (not path). */
  async write(tag: string, suffix: 'email.eml' | 'sms.json', content: (createdAt: Date) => Promise<Buffer | string> | Buffer | string): Promise<string> {
    const ms = Math.max(this.now().getTime(), this.lastMs + 1);
    this.lastMs = ms;
    const createdAt = new Date(ms);
    const name = `${createdAt.toISOString().replace(/:/g, '-')}-${fileTag(tag)}-${suffix}`;
    const temporary = path.join(this.dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    const data = await content(createdAt);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const file = await open(temporary, 'wx', 0o600);
      try {
        await file.writeFile(data);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path.join(this.dir, name));
      return name;
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined);
      const code = (error as NodeJS.ErrnoException).code;
      throw new DeliveryFailure('provider_unavailable', false, `could not write to the outbox folder${code ? ` (${code})` : ''}`);
    }
  }
}

/** The batch id inside our Message-ID or idempotency key, else something random: the file name's middle. */
function fileTag(key: string): string {
  // A resend's round (`-r{n}`) is left out: the file is named after its batch like the first.
  const batch = /^<?pass-([A-Za-z0-9-]{1,64}?)(?:-r\d+)?(?:-sms)?(?:@|$)/.exec(key)?.[1];
  return batch ?? randomBytes(8).toString('hex');
}

function folderOf(outbox: OutboxFolder | string): OutboxFolder {
  return typeof outbox === 'string' ? new OutboxFolder(outbox) : outbox;
}

export class OutboxMailSender implements MailSender {
  readonly kind = 'outbox' as const;
  readonly folder: OutboxFolder;

  constructor(outbox: OutboxFolder | string) {
    this.folder = folderOf(outbox);
  }

  async send(mail: OutgoingMail): Promise<SendReceipt> {
    // A real message, so that it opens in a mail client as the guest would see it.
    const name = await this.folder.write(mail.messageId, 'email.eml', async () =>
      Buffer.concat([Buffer.from(`${OUTBOX_LINK_HEADER}: ${oneHeaderValue(mail.link)}\r\n`), await renderRawMail(mail)]),
    );
    return { providerMessageId: name };
  }

  async close(): Promise<void> {}
}

export class OutboxSmsSender implements SmsSender {
  readonly kind = 'outbox' as const;
  readonly folder: OutboxFolder;

  constructor(outbox: OutboxFolder | string) {
    this.folder = folderOf(outbox);
  }

  async send(sms: OutgoingSms): Promise<SendReceipt> {
    const name = await this.folder.write(sms.idempotencyKey, 'sms.json', (createdAt) =>
      JSON.stringify({ to: sms.to, text: sms.text, link: sms.link, idempotency_key: sms.idempotencyKey, created_at: createdAt.toISOString() }, null, 2) + '\n',
    );
    return { providerMessageId: name };
  }

  async close(): Promise<void> {}
}

const OUTBOX_LINK_HEADER = 'X-Outbox-Link';

/** A header value on one line: the link is ours, but a header must never be split. */
function oneHeaderValue(value: string): string {
  return value.replace(/[\x00-\x1f\x7f]/g, '');
}

async function readEntry(dir: string, name: string): Promise<OutboxEntry | null> {
  const match = FILE_NAME.exec(name);
  if (!match) return null;
  const file = path.join(dir, name);
  const createdAt = match[1]!.replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3');
  try {
    if (match[2] === 'sms.json') {
      const sms = JSON.parse(await readFile(file, 'utf8')) as { to?: unknown; text?: unknown; link?: unknown };
      if (typeof sms.to !== 'string' || typeof sms.text !== 'string') return null;
      return { file, channel: 'sms', to: sms.to, subject: null, text: sms.text, link: typeof sms.link === 'string' ? sms.link : null, createdAt };
    }
    const message = parseMimeMessage(await readFile(file));
    return { file, channel: 'email', to: message.header('to') ?? '', subject: message.header('subject'), text: null, link: message.header(OUTBOX_LINK_HEADER.toLowerCase()), createdAt };
  } catch {
    // Gone since the listing, or not ours: a listing skips it rather than failing.
    return null;
  }
}

/** The latest `limit` messages of an outbox folder, newest first; none when the folder does not exist. */
export async function listOutbox(dir: string, limit: number): Promise<OutboxEntry[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const entries: OutboxEntry[] = [];
  for (const name of names.filter((n) => FILE_NAME.test(n)).sort().reverse()) {
    if (entries.length >= limit) break;
    const entry = await readEntry(dir, name);
    if (entry) entries.push(entry);
  }
  return entries;
}
