import { expect } from 'chai';
import net, { type AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { DeliveryFailure } from '../../shared/delivery/delivery-ports.js';
import { findPart, parseMimeMessage } from '../../shared/delivery/mime-reader.js';
import { composePassEmail, defaultMailFrom } from '../../shared/delivery/pass-message.js';
import { SmtpMailSender } from '../../shared/delivery/smtp-mail-sender.js';

const BASE = 'https://passes.example.com';
const BATCH = '0b7f6c1e-5d2a-4c3b-9e8f-112233445566';

interface Received {
  readonly from: string | false;
  readonly to: string[];
  readonly raw: Buffer;
}

/** A real SMTP server on 127.0.0.1:0, plain text (no STARTTLS offered), no authentication needed unless `onAuth` asks for it. */
async function startServer(hooks: Pick<SMTPServerOptions, 'onRcptTo' | 'onData' | 'onAuth' | 'socketTimeout'> = {}) {
  const received: Received[] = [];
  let connections = 0;
  const server = new SMTPServer({
    authOptional: !hooks.onAuth,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 1000,
    ...(hooks.socketTimeout ? { socketTimeout: hooks.socketTimeout } : {}),
    ...(hooks.onAuth ? { onAuth: hooks.onAuth } : {}),
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({ from: session.envelope.mailFrom && session.envelope.mailFrom.address, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
        if (hooks.onData) hooks.onData(stream, session, callback);
        else callback(null, 'OK: queued as 4711');
      });
    },
    ...(hooks.onRcptTo ? { onRcptTo: hooks.onRcptTo } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

function mail(to = 'ada@example.com') {
  return composePassEmail(
    {
      batchId: BATCH,
      guestFirstName: 'Ada',
      facilityName: 'Main entrance',
      arrivalDate: '2026-12-01',
      arrivalTime: '09:30',
      timeZone: 'UTC',
      validFrom: '2026-12-01T09:00:00.000Z',
      validUntil: '2026-12-01T18:00:00.000Z',
      invitedBy: 'Grace Hopper',
      passLink: `${BASE}/p/tok_123`,
      passCount: 2,
    },
    to,
    { from: defaultMailFrom(BASE), publicBaseUrl: BASE },
  );
}

async function refusal(promise: Promise<unknown>): Promise<DeliveryFailure> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(DeliveryFailure);
    return error as DeliveryFailure;
  }
  throw new Error('the send was accepted');
}

describe('SMTP mail sender (real in-process SMTP server)', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function setUp(hooks?: Parameters<typeof startServer>[0]) {
    const server = await startServer(hooks);
    cleanups.push(server.close);
    const sender = new SmtpMailSender(server.url, { timeoutMs: 2000, sendTimeoutMs: 5000 });
    cleanups.push(() => sender.close());
    return { server, sender };
  }

  it('delivers one message with both parts, the stable Message-ID and the one recipient', async () => {
    const { server, sender } = await setUp();
    const receipt = await sender.send(mail());
    expect(sender.kind).to.equal('smtp');
    expect(receipt.providerMessageId).to.match(/^250 .*OK: queued as 4711/);
    expect(server.received).to.have.length(1);
    const [got] = server.received;
    expect(got!.to).to.deep.equal(['ada@example.com']);
    expect(got!.from).to.equal('no-reply@passes.example.com');
    const message = parseMimeMessage(got!.raw);
    expect(message.header('message-id')).to.equal(`<pass-${BATCH}@passes.example.com>`);
    expect(message.header('subject')).to.equal('Your 2 guest passes for Main entrance');
    expect(message.header('to')).to.equal('ada@example.com');
    expect(findPart(message, 'text/plain')!.text).to.include(`${BASE}/p/tok_123`);
    expect(findPart(message, 'text/html')!.text).to.include(`href="${BASE}/p/tok_123"`);
  });

  it('never turns one recipient value into several', async () => {
    const { server, sender } = await setUp();
    await sender.send(mail('ada@example.com, evil@example.com')).catch(() => undefined);
    expect(server.received.flatMap((r) => r.to)).not.to.include('evil@example.com');
  });

  it('reuses its pooled connection for several sends', async () => {
    const { server, sender } = await setUp();
    for (let i = 0; i < 3; i++) await sender.send(mail());
    expect(server.received).to.have.length(3);
    expect(server.connections()).to.equal(1);
  });

  it('sends on a new connection once the server has closed an idle one', async () => {
    const { server, sender } = await setUp({ socketTimeout: 200 });
    await sender.send(mail());
    await new Promise((resolve) => setTimeout(resolve, 600)); // the server hangs up on the idle connection
    await sender.send(mail());
    expect(server.received).to.have.length(2);
    expect(server.connections()).to.equal(2);
  });

  it('opens no more connections than allowed, however many sends wait', async () => {
    const server = await startServer();
    cleanups.push(server.close);
    const sender = new SmtpMailSender(server.url, { timeoutMs: 2000, sendTimeoutMs: 5000, maxConnections: 2 });
    cleanups.push(() => sender.close());
    await Promise.all(Array.from({ length: 10 }, () => sender.send(mail())));
    expect(server.received).to.have.length(10);
    expect(server.connections()).to.equal(2);
  });

  it('signs in with the credentials of SMTP_URL, and reports refused credentials as provider_rejected, permanent', async () => {
    const logins: string[] = [];
    const server = await startServer({
      onAuth: (auth, _session, callback) => {
        logins.push(`${auth.username}:${auth.password}`);
        if (auth.password === 's3cret') callback(null, { user: auth.username });
        else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      },
    });
    cleanups.push(server.close);
    const url = new URL(server.url);
    url.username = 'mailer';
    url.password = 's3cret';
    const sender = new SmtpMailSender(url.href, { timeoutMs: 2000, sendTimeoutMs: 5000 });
    cleanups.push(() => sender.close());
    await sender.send(mail());
    expect(server.received).to.have.length(1);
    url.password = 'wrong';
    const refused = new SmtpMailSender(url.href, { timeoutMs: 2000, sendTimeoutMs: 5000 });
    cleanups.push(() => refused.close());
    const failure = await refusal(refused.send(mail()));
    expect(failure.errorClass).to.equal('provider_rejected');
    expect(failure.permanent).to.equal(true);
    expect(failure.message).not.to.include('wrong');
    expect(logins).to.deep.equal(['mailer:s3cret', 'mailer:wrong']);
  });

  it('reports a 550 to RCPT TO as recipient_refused, permanent, without the address or the server text', async () => {
    const { sender } = await setUp({
      onRcptTo: (_address, _session, callback) => callback(smtpError(550, 'No such user here (secret server text)')),
    });
    const failure = await refusal(sender.send(mail()));
    expect(failure.errorClass).to.equal('recipient_refused');
    expect(failure.permanent).to.equal(true);
    expect(failure.message).to.include('550');
    expect(failure.message).not.to.include('ada@example.com');
    expect(failure.message).not.to.include('secret server text');
  });

  it('reports a 451 to RCPT TO as provider_unavailable, transient, and the pool keeps working', async () => {
    let refuse = true;
    const { server, sender } = await setUp({
      onRcptTo: (_address, _session, callback) => callback(refuse ? smtpError(451, 'Try again later') : null),
    });
    const failure = await refusal(sender.send(mail()));
    expect(failure.errorClass).to.equal('provider_unavailable');
    expect(failure.permanent).to.equal(false);
    refuse = false;
    await sender.send(mail());
    expect(server.received).to.have.length(1);
  });

  it('reports a 554 to DATA as provider_rejected, permanent', async () => {
    const { sender } = await setUp({ onData: (_stream, _session, callback) => callback(smtpError(554, 'Message looks like spam')) });
    const failure = await refusal(sender.send(mail()));
    expect(failure.errorClass).to.equal('provider_rejected');
    expect(failure.permanent).to.equal(true);
    expect(failure.message).not.to.include('spam');
  });

  it('reports a closed port (connection refused) as provider_unavailable, transient', async () => {
    const server = await startServer();
    await server.close();
    const sender = new SmtpMailSender(server.url, { timeoutMs: 2000, sendTimeoutMs: 5000 });
    cleanups.push(() => sender.close());
    const failure = await refusal(sender.send(mail()));
    expect(failure.errorClass).to.equal('provider_unavailable');
    expect(failure.permanent).to.equal(false);
  });

  it('gives up on a server that accepts the connection but never greets, within its time-out', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    );
    const sender = new SmtpMailSender(`smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, { timeoutMs: 300, sendTimeoutMs: 5000 });
    cleanups.push(() => sender.close());
    const failure = await refusal(sender.send(mail()));
    expect(failure.errorClass).to.equal('provider_unavailable');
    expect(failure.permanent).to.equal(false);
  });

  it('gives up on a message the server never answers, within its send time-out; the next goes out on a new connection', async () => {
    let stall = true;
    const server = await startServer({
      onData(_stream, _session, callback) {
        if (!stall) return callback(null, 'OK: queued as 4712');
        stall = false; // the first message is taken in and never answered
      },
    });
    cleanups.push(server.close);
    const sender = new SmtpMailSender(server.url, { timeoutMs: 5000, sendTimeoutMs: 500 });
    cleanups.push(() => sender.close());
    const failure = await refusal(sender.send(mail()));
    expect(failure.errorClass).to.equal('provider_unavailable');
    expect(failure.permanent).to.equal(false);
    expect(await sender.send(mail())).to.have.property('providerMessageId');
    expect(server.connections()).to.equal(2);
  });
});
