// A small pool of SMTP connections (nodemailer's SMTPConnection, which speaks the protocol:
// greeting, EHLO, STARTTLS, AUTH, MAIL/RCPT/DATA, and labels its errors as classifySmtpError
// reads them) for messages that are already composed (raw-mail.ts). nodemailer's own pool takes a
// message through its mail composer and stream pipeline first: twice the CPU per message of this,
// for nothing a composed message needs.
//
// What it keeps of nodemailer's pool: at most `maxConnections` connections, each sending one
// message at a time and `maxMessages` in all before it is replaced; a connection idle for
// `idleTimeoutMs` says goodbye itself (before the server drops it); a message the server refused
// (EENVELOPE, EMESSAGE) leaves its connection in use after RSET; any other failure ends it; a
// message that could not start on a reused connection because the server had dropped it in the
// meantime goes out on a new one, once (not a byte of it was sent).
import { Readable } from 'node:stream';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { parseConnectionUrl } from 'nodemailer/lib/shared';

export interface SmtpPoolOptions {
  readonly maxConnections: number;
  /** Messages per connection before it is replaced (default 100, as nodemailer's pool). */
  readonly maxMessages?: number;
  /** A connection idle this long is closed by us (default 4 min, below the 5 the RFC asks servers to wait). */
  readonly idleTimeoutMs?: number;
  /** SMTPConnection's time-outs and TLS options. */
  readonly connection: Pick<SMTPConnection.Options, 'connectionTimeout' | 'greetingTimeout' | 'socketTimeout' | 'dnsTimeout' | 'tls'>;
}

export interface SmtpEnvelope {
  readonly from: string;
  readonly to: readonly string[];
}

export interface SmtpSendInfo {
  /** The server's last reply (250 ...). */
  readonly response: string;
}

interface Pending {
  readonly envelope: SmtpEnvelope;
  readonly raw: Buffer;
  readonly resolve: (info: SmtpSendInfo) => void;
  readonly reject: (error: unknown) => void;
  /** Already tried on a connection the server had dropped. */
  retried: boolean;
  /** Its time is up: rejected, and not to be started (again). */
  timedOut: boolean;
  /** Ends the connection a send under way is on, when its time is up. */
  onTimeout: (() => void) | null;
}

interface Slot {
  readonly connection: SMTPConnection;
  /** Connected (and logged in): takes messages. */
  ready: boolean;
  busy: boolean;
  /** Messages handed to it so far. */
  messages: number;
  closed: boolean;
  idleTimer: NodeJS.Timeout | null;
}

/** nodemailer's transient errors: the connection failed, not the message. */
function isTransient(error: { code?: unknown; responseCode?: unknown }): boolean {
  return error.responseCode === 421 || error.code === 'ECONNECTION' || error.code === 'ESOCKET' || error.code === 'ETIMEDOUT';
}

/** As AbortSignal.timeout's reason reads (classifySmtpError knows it by name). */
function timeoutError(): Error {
  return Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
}

export class SmtpConnectionPool {
  private readonly connectionOptions: SMTPConnection.Options;
  private readonly auth: { user: string; pass: string } | null;
  private readonly queue: Pending[] = [];
  private readonly slots = new Set<Slot>();
  private closed = false;

  constructor(
    smtpUrl: string,
    private readonly options: SmtpPoolOptions,
  ) {
    // host, port, secure (smtps:), auth (user:pass) and query options come from the URL, as nodemailer reads it.
    const { auth, ...fromUrl } = parseConnectionUrl(smtpUrl);
    this.connectionOptions = { ...(fromUrl as SMTPConnection.Options), ...options.connection };
    this.auth = auth && (auth.user || auth.pass) ? auth : null;
  }

  /**
   * Sends one composed message within `timeoutMs` (queueing included); rejects with nodemailer's
   * error, or a TimeoutError. A plain timer, not an AbortSignal.timeout: that one and its listeners
   * cost about 20 µs a send, and each lingers until it fires, a minute later.
   */
  send(envelope: SmtpEnvelope, raw: Buffer, timeoutMs: number): Promise<SmtpSendInfo> {
    return new Promise<SmtpSendInfo>((resolve, reject) => {
      if (this.closed) return reject(Object.assign(new Error('Connection pool was closed'), { code: 'ECONNECTION' }));
      const timer = setTimeout(() => {
        pending.timedOut = true;
        const at = this.queue.indexOf(pending);
        if (at >= 0) this.queue.splice(at, 1);
        pending.onTimeout?.(); // a send under way ends with its connection
        reject(timeoutError());
      }, timeoutMs);
      const pending: Pending = {
        envelope,
        raw,
        resolve: (info) => {
          clearTimeout(timer);
          resolve(info);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
        retried: false,
        timedOut: false,
        onTimeout: null,
      };
      this.queue.push(pending);
      this.pump();
    });
  }

  close(): void {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(Object.assign(new Error('Connection pool was closed'), { code: 'ECONNECTION' }));
    for (const slot of [...this.slots]) this.end(slot, true);
  }

  /** Hands queued messages to idle connections, opening new ones while there is room. */
  private pump(): void {
    while (this.queue.length > 0) {
      const idle = [...this.slots].find((s) => s.ready && !s.busy && !s.closed);
      if (idle) {
        this.deliver(idle, this.queue.shift()!);
        continue;
      }
      const opening = [...this.slots].filter((s) => !s.ready && !s.closed).length;
      if (this.slots.size >= this.options.maxConnections || opening >= this.queue.length) return;
      this.open();
    }
  }

  private open(): void {
    const connection = new SMTPConnection(this.connectionOptions);
    const slot: Slot = { connection, ready: false, busy: false, messages: 0, closed: false, idleTimer: null };
    this.slots.add(slot);
    const failed = (error: unknown) => {
      if (slot.closed) return;
      this.end(slot, true);
      // The connection this message was waiting for cannot be made: the message fails with it
      // (a server that is down fails each send, rather than holding them all).
      this.queue.shift()?.reject(error);
      this.pump();
    };
    // Before it is ready, a failure to connect is told by 'error' (or an 'end'); after, each send
    // reports its own failure, and an idle connection the server hung up on just ends.
    connection.on('error', (error) => {
      if (!slot.ready) failed(error);
    });
    connection.once('end', () => {
      if (!slot.ready) failed(Object.assign(new Error('Connection closed before it was ready'), { code: 'ECONNECTION', command: 'CONN' }));
      else this.end(slot, false);
    });
    connection.connect((error) => {
      if (slot.closed) return;
      if (error) return failed(error);
      if (!this.auth || !connection.allowsAuth) return this.ready(slot);
      connection.login({ user: this.auth.user, credentials: { user: this.auth.user, pass: this.auth.pass } }, (loginError) => {
        if (slot.closed) return;
        if (loginError) return failed(loginError);
        this.ready(slot);
      });
    });
  }

  private ready(slot: Slot): void {
    slot.ready = true;
    this.release(slot);
  }

  private deliver(slot: Slot, pending: Pending): void {
    if (pending.timedOut) {
      this.pump();
      return;
    }
    slot.busy = true;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    const reused = slot.messages > 0;
    slot.messages++;
    // A stream, so that whether any of the message was read (sent) is known when the send fails
    // (one that pushes its one buffer: Readable.from drives an iterator, at twice the cost).
    const raw = pending.raw;
    const message = new Readable({
      read() {
        this.push(raw);
        this.push(null);
      },
    });
    pending.onTimeout = () => this.end(slot, true); // a send that outlived its time-out ends with its connection
    slot.connection.send({ from: pending.envelope.from, to: [...pending.envelope.to] }, message, (error, info) => {
      pending.onTimeout = null;
      if (slot.closed) {
        if (!error) return pending.resolve({ response: info.response });
        return this.retryOrFail(pending, error, reused && !message.readableDidRead);
      }
      if (!error) {
        pending.resolve({ response: info.response });
        return this.release(slot);
      }
      const refused = (error.code === 'EENVELOPE' || error.code === 'EMESSAGE') && error.responseCode !== 421;
      if (refused) {
        // The server refused this message; the connection is fine once reset.
        slot.connection.reset((resetError) => (resetError ? this.end(slot, true) : this.release(slot)));
        return pending.reject(error);
      }
      this.end(slot, true);
      this.retryOrFail(pending, error, reused && !message.readableDidRead && isTransient(error));
    });
  }

  /** A message that never started on a connection the server had dropped goes out on a new one, once. */
  private retryOrFail(pending: Pending, error: unknown, unsent: boolean): void {
    if (unsent && !pending.retried && !pending.timedOut && !this.closed) {
      pending.retried = true;
      this.queue.unshift(pending);
      this.pump();
      return;
    }
    pending.reject(error);
    this.pump();
  }

  /** Ready for the next message, or replaced once it has sent its share. */
  private release(slot: Slot): void {
    if (slot.closed) return;
    slot.busy = false;
    if (slot.messages >= (this.options.maxMessages ?? 100)) {
      this.end(slot, false, true);
      this.pump();
      return;
    }
    const idleTimeoutMs = this.options.idleTimeoutMs ?? 4 * 60_000;
    slot.idleTimer = setTimeout(() => {
      if (!slot.busy) this.end(slot, false, true);
    }, idleTimeoutMs);
    slot.idleTimer.unref();
    this.pump();
  }

  /** Takes a connection out of the pool: closed at once, said goodbye to (QUIT), or already ended. */
  private end(slot: Slot, close: boolean, quit = false): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    const wasOpen = !slot.closed;
    slot.closed = true;
    this.slots.delete(slot);
    if (wasOpen && quit) slot.connection.quit();
    else if (wasOpen && close) slot.connection.close();
    if (wasOpen && !this.closed) setImmediate(() => this.pump());
  }
}
