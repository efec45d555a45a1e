import { expect } from 'chai';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryFailure, type OutgoingSms } from '../../shared/delivery/delivery-ports.js';
import { SmsWebhookSender } from '../../shared/delivery/sms-webhook-sender.js';
import { TwilioSmsSender } from '../../shared/delivery/twilio-sms-sender.js';

interface Request {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

type Reply = (req: Request, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1:0 that records each request and answers with `reply`. */
async function startServer(reply: Reply) {
  const requests: Request[] = [];
  let current = reply;
  const server = http.createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      current(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    answer: (next: Reply) => (current = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(status: number, body: unknown): Reply {
  return (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

const SMS: OutgoingSms = {
  to: '+15551234567',
  text: 'Guest pass for Main entrance on 2026-12-01 09:30 UTC: https://passes.example.com/p/tok_123',
  idempotencyKey: 'pass-0b7f6c1e-5d2a-4c3b-9e8f-112233445566-sms',
  link: 'https://passes.example.com/p/tok_123',
};

async function refusal(promise: Promise<unknown>): Promise<DeliveryFailure> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(DeliveryFailure);
    return error as DeliveryFailure;
  }
  throw new Error('the send was accepted');
}

describe('SMS senders (real local HTTP servers)', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function server(reply: Reply) {
    const s = await startServer(reply);
    cleanups.push(s.close);
    return s;
  }

  describe('webhook', () => {
    it('POSTs the JSON contract with the bearer token and idempotency key, and returns the id', async () => {
      const s = await server(json(202, { id: 'msg-42' }));
      const sender = new SmsWebhookSender({ url: `${s.base}/sms/send`, authToken: 'sekret-token' });
      expect(sender.kind).to.equal('webhook');
      const receipt = await sender.send(SMS);
      expect(receipt).to.deep.equal({ providerMessageId: 'msg-42' });
      expect(s.requests).to.have.length(1);
      const [req] = s.requests;
      expect(req!.method).to.equal('POST');
      expect(req!.url).to.equal('/sms/send');
      expect(req!.headers['content-type']).to.equal('application/json');
      expect(req!.headers.authorization).to.equal('Bearer sekret-token');
      expect(JSON.parse(req!.body)).to.deep.equal({ to: SMS.to, text: SMS.text, idempotency_key: SMS.idempotencyKey });
    });

    it('sends no Authorization without a token; takes `message_id`, or null when the body names none', async () => {
      const s = await server(json(200, { message_id: 'm-7' }));
      const sender = new SmsWebhookSender({ url: s.base, authToken: null });
      expect(await sender.send(SMS)).to.deep.equal({ providerMessageId: 'm-7' });
      expect(s.requests[0]!.headers.authorization).to.equal(undefined);
      s.answer((_req, res) => res.writeHead(204).end());
      expect(await sender.send(SMS)).to.deep.equal({ providerMessageId: null });
      s.answer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('queued'));
      expect(await sender.send(SMS)).to.deep.equal({ providerMessageId: null });
    });

    it('classifies 4xx as permanent (400/404/422 the recipient, 401/403 and others the provider), 5xx and 429 as transient', async () => {
      const s = await server(json(400, {}));
      const sender = new SmsWebhookSender({ url: s.base, authToken: null });
      const expectations: Array<[number, string, boolean]> = [
        [400, 'recipient_refused', true],
        [404, 'recipient_refused', true],
        [422, 'recipient_refused', true],
        [401, 'provider_rejected', true],
        [403, 'provider_rejected', true],
        [409, 'provider_rejected', true],
        [429, 'provider_unavailable', false],
        [500, 'provider_unavailable', false],
        [503, 'provider_unavailable', false],
        [302, 'provider_rejected', true],
      ];
      for (const [status, errorClass, permanent] of expectations) {
        s.answer((_req, res) => res.writeHead(status, status === 302 ? { Location: '/elsewhere' } : { 'Content-Type': 'application/json' }).end(`{"error":"no ${SMS.to}"}`));
        const failure = await refusal(sender.send(SMS));
        expect([status, failure.errorClass, failure.permanent]).to.deep.equal([status, errorClass, permanent]);
        expect(failure.message).not.to.include(SMS.to);
      }
      // The redirect was not followed.
      expect(s.requests.map((r) => r.url)).not.to.include('/elsewhere');
    });

    it('classifies a refused connection and a silent server as provider_unavailable, transient', async () => {
      const closed = await startServer(json(200, {}));
      await closed.close();
      const refused = await refusal(new SmsWebhookSender({ url: closed.base, authToken: null }).send(SMS));
      expect([refused.errorClass, refused.permanent]).to.deep.equal(['provider_unavailable', false]);

      const silent = await server(() => undefined); // never answers
      const timedOut = await refusal(new SmsWebhookSender({ url: silent.base, authToken: null, timeoutMs: 300 }).send(SMS));
      expect([timedOut.errorClass, timedOut.permanent]).to.deep.equal(['provider_unavailable', false]);
    });
  });

  describe('Twilio', () => {
    const ACCOUNT = 'AC0123456789abcdef0123456789abcdef';

    function twilio(base: string, timeoutMs?: number) {
      return new TwilioSmsSender({ baseUrl: base, accountSid: ACCOUNT, authToken: 'twilio-token', from: '+15557654321', ...(timeoutMs ? { timeoutMs } : {}) });
    }

    it('POSTs the form fields to the account Messages resource with Basic auth, and returns the sid', async () => {
      const s = await server(json(201, { sid: 'SM0123456789abcdef0123456789abcdef', status: 'queued' }));
      const sender = twilio(`${s.base}/`);
      expect(sender.kind).to.equal('twilio');
      expect(await sender.send(SMS)).to.deep.equal({ providerMessageId: 'SM0123456789abcdef0123456789abcdef' });
      const [req] = s.requests;
      expect(req!.method).to.equal('POST');
      expect(req!.url).to.equal(`/2010-04-01/Accounts/${ACCOUNT}/Messages.json`);
      expect(req!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
      expect(req!.headers.authorization).to.equal(`Basic ${Buffer.from(`${ACCOUNT}:twilio-token`).toString('base64')}`);
      expect(Object.fromEntries(new URLSearchParams(req!.body))).to.deep.equal({ To: SMS.to, From: '+15557654321', Body: SMS.text });
      expect(req!.headers).not.to.have.property('idempotency-key');
    });

    it('refuses the recipient on Twilio number errors, rejects on other 4xx, defers on 429 and 5xx', async () => {
      const s = await server(json(400, {}));
      const sender = twilio(s.base);
      const expectations: Array<[number, number | null, string, boolean]> = [
        [400, 21211, 'recipient_refused', true],
        [400, 21614, 'recipient_refused', true],
        [400, 21610, 'recipient_refused', true],
        [400, 21606, 'provider_rejected', true],
        [401, 20003, 'provider_rejected', true],
        [404, 20404, 'provider_rejected', true],
        [429, 20429, 'provider_unavailable', false],
        [500, null, 'provider_unavailable', false],
      ];
      for (const [status, code, errorClass, permanent] of expectations) {
        s.answer(json(status, code === null ? { message: 'boom' } : { code, message: `The 'To' number ${SMS.to} is not valid`, status }));
        const failure = await refusal(sender.send(SMS));
        expect([status, code, failure.errorClass, failure.permanent]).to.deep.equal([status, code, errorClass, permanent]);
        expect(failure.message).not.to.include(SMS.to);
      }
    });

    it('classifies a network failure as provider_unavailable, transient', async () => {
      const closed = await startServer(json(200, {}));
      await closed.close();
      const failure = await refusal(twilio(closed.base).send(SMS));
      expect([failure.errorClass, failure.permanent]).to.deep.equal(['provider_unavailable', false]);
    });
  });
});
