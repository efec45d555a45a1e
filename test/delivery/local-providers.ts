// Real providers for delivery tests, on 127.0.0.1: an SMTP server (the smtp-server package) and
// an SMS webhook (node:http), each recording what it accepted and answering as a test tells it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  readonly to: readonly string[];
  readonly raw: string;
  readonly messageId: string | null;
}

export interface LocalSmtp {
  readonly url: string;
  readonly received: ReceivedMail[];
  /** Refuse a recipient with this SMTP reply (for example 550 or 451); null accepts it. */
  refuse: (address: string) => { code: number; message: string } | null;
  close(): Promise<void>;
}

export async function startLocalSmtp(): Promise<LocalSmtp> {
  const received: ReceivedMail[] = [];
  const local: LocalSmtp = {
    url: '',
    received,
    refuse: () => null,
    close: async () => undefined,
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = local.refuse(address.address);
      if (!refusal) return callback();
      const error = new Error(refusal.message) as Error & { responseCode: number };
      error.responseCode = refusal.code;
      callback(error);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          messageId: /^Message-ID:\s*(<[^>]+>)/im.exec(raw)?.[1] ?? null,
        });
        callback();
      });
    },
  });
  // A client that dies mid-session (a killed service) resets its connection: smtp-server reports
  // that as an 'error' event, which would otherwise be thrown.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(local, {
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

export interface ReceivedSms {
  readonly to: string;
  readonly text: string;
  readonly idempotencyKey: string;
}

export interface LocalSmsWebhook {
  readonly url: string;
  /** Every request, answered or not. */
  readonly requests: ReceivedSms[];
  /** Requests answered 2xx. */
  readonly accepted: ReceivedSms[];
  /** The status for the n-th request (0-based); default 200. */
  status: (n: number, sms: ReceivedSms) => number;
  close(): Promise<void>;
}

export async function startLocalSmsWebhook(): Promise<LocalSmsWebhook> {
  const requests: ReceivedSms[] = [];
  const accepted: ReceivedSms[] = [];
  const local: LocalSmsWebhook = { url: '', requests, accepted, status: () => 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to: string; text: string; idempotency_key: string };
      const sms = { to: body.to, text: body.text, idempotencyKey: body.idempotency_key };
      const status = local.status(requests.length, sms);
      requests.push(sms);
      if (status < 300) accepted.push(sms);
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(status < 300 ? { id: `sms-${accepted.length}` } : { error: 'no' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(local, {
    url: `http://127.0.0.1:${port}/sms`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
