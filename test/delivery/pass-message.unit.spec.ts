import { expect } from 'chai';
import {
  composePassEmail,
  composePassSms,
  defaultMailFrom,
  oneLine,
  passMessageId,
  type PassMessageContent,
} from '../../shared/delivery/pass-message.js';
import { findPart, parseMimeMessage, rawHeaderLines } from '../../shared/delivery/mime-reader.js';
import { renderRawMail } from '../../shared/delivery/raw-mail.js';

const BASE = 'https://passes.example.com';
const BATCH = '0b7f6c1e-5d2a-4c3b-9e8f-112233445566';
const LINK = `${BASE}/p/tok_AbCdEf0123456789-_xyz`;

function content(overrides: Partial<PassMessageContent> = {}): PassMessageContent {
  return {
    batchId: BATCH,
    guestFirstName: 'Ada',
    facilityName: 'Main entrance',
    arrivalDate: '2026-12-01',
    arrivalTime: '09:30',
    timeZone: 'UTC',
    validFrom: '2026-12-01T09:30:00.000Z',
    validUntil: '2026-12-01T18:00:00.000Z',
    invitedBy: 'Grace Hopper',
    passLink: LINK,
    passCount: 1,
    ...overrides,
  };
}

const OPTIONS = { from: defaultMailFrom(BASE), publicBaseUrl: BASE };

describe('pass message composition', () => {
  describe('identifiers', () => {
    it('derives a stable Message-ID and sender from the base URL host (no port)', () => {
      expect(passMessageId(BATCH, 'https://passes.example.com:8443/some/path')).to.equal(`<pass-${BATCH}@passes.example.com>`);
      expect(passMessageId(BATCH, BASE)).to.equal(passMessageId(BATCH, BASE));
      expect(defaultMailFrom('http://127.0.0.1:8080')).to.equal('Guest Pass <no-reply@127.0.0.1>');
      expect(composePassEmail(content(), 'ada@example.com', OPTIONS).messageId).to.equal(`<pass-${BATCH}@passes.example.com>`);
    });

    it('refuses a batch id that is not a UUID-like token rather than put it in a header', () => {
      expect(() => passMessageId('x\r\nBcc: evil@example.com', BASE)).to.throw(TypeError);
    });

    it('keys the SMS by batch', () => {
      expect(composePassSms(content(), '+15551234567', { publicBaseUrl: BASE }).idempotencyKey).to.equal(`pass-${BATCH}-sms`);
    });

    it('gives a resend round its own Message-ID and SMS key, the same for every retry of that round', () => {
      expect(composePassEmail({ ...content(), round: 2 }, 'ada@example.com', OPTIONS).messageId).to.equal(`<pass-${BATCH}-r2@passes.example.com>`);
      expect(composePassEmail({ ...content(), round: 2 }, 'ada@example.com', OPTIONS).messageId).to.equal(passMessageId(BATCH, BASE, 2));
      expect(composePassEmail({ ...content(), round: 0 }, 'ada@example.com', OPTIONS).messageId).to.equal(`<pass-${BATCH}@passes.example.com>`);
      expect(composePassSms({ ...content(), round: 1 }, '+15551234567', { publicBaseUrl: BASE }).idempotencyKey).to.equal(`pass-${BATCH}-r1-sms`);
    });
  });

  describe('email', () => {
    it('names the facility, arrival, validity window in UTC, inviter, pass count and link in the text part', () => {
      const mail = composePassEmail(content({ passCount: 3 }), 'ada@example.com', OPTIONS);
      expect(mail.subject).to.equal('Your 3 guest passes for Main entrance');
      expect(mail.to).to.equal('ada@example.com');
      expect(mail.from).to.equal('Guest Pass <no-reply@passes.example.com>');
      expect(mail.text).to.include('Hello Ada,');
      expect(mail.text).to.include('You have 3 guest passes for Main entrance.');
      expect(mail.text).to.include('Facility: Main entrance');
      expect(mail.text).to.include('Arrival: Tuesday 1 December 2026 at 09:30 UTC');
      expect(mail.text).to.include('Valid: from Tuesday 1 December 2026, 09:30 UTC until Tuesday 1 December 2026, 18:00 UTC');
      expect(mail.text).to.include('Passes: 3 passes');
      expect(mail.text).to.include('Invited by: Grace Hopper');
      expect(mail.text).to.include(`\n${LINK}\n`);
    });

    it('says "1 pass", leaves out an absent time and inviter', () => {
      const mail = composePassEmail(content({ arrivalTime: null, invitedBy: null }), 'ada@example.com', OPTIONS);
      expect(mail.subject).to.equal('Your guest pass for Main entrance');
      expect(mail.text).to.include('Passes: 1 pass\n');
      expect(mail.text).to.include('Arrival: Tuesday 1 December 2026\n');
      expect(mail.text).not.to.include('Invited by');
      expect(mail.html).not.to.include('Invited by');
    });

    it('has an HTML part with inline styles only, no remote resources, and the link as a button and as text', () => {
      const { html } = composePassEmail(content(), 'ada@example.com', OPTIONS);
      expect(html).to.match(/^<!DOCTYPE html>/);
      expect(html).not.to.match(/<img|<link|<style|<script|@import|url\(/i);
      const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
      expect(hrefs).to.deep.equal([LINK, LINK]);
      expect(html).to.match(/<a href="[^"]+" style="display:inline-block[^"]*">Open your pass<\/a>/);
      expect(html).to.include(`>${LINK}</a>`);
      expect(html).to.include('Main entrance');
      expect(html).to.include('Tuesday 1 December 2026 at 09:30 UTC');
      expect(html).to.include('1 pass');
      expect(html).to.include('Grace Hopper');
    });

    it('escapes every guest- and host-supplied value in the HTML part', () => {
      const { html, text } = composePassEmail(
        content({ guestFirstName: '<script>alert(1)</script>', facilityName: 'R&D "Lab" <b>', invitedBy: "O'Brien <img src=x onerror=alert(1)>" }),
        'ada@example.com',
        OPTIONS,
      );
      expect(html).not.to.include('<script>');
      expect(html).not.to.include('<img');
      expect(html).not.to.include('<b>');
      expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).to.include('R&amp;D &quot;Lab&quot; &lt;b&gt;');
      expect(html).to.include('O&#39;Brien &lt;img src=x onerror=alert(1)&gt;');
      // The plain-text part is text: shown as typed.
      expect(text).to.include('Hello <script>alert(1)</script>,');
    });

    it('makes header injection impossible: no extra header in the raw message, whichever value carries CR/LF', async () => {
      const evil = '\r\nBcc: evil@example.com\r\nX-Injected: 1';
      const mail = composePassEmail(
        content({ guestFirstName: `Ada${evil}`, facilityName: `Main entrance${evil}`, invitedBy: `Grace${evil}` }),
        `ada@example.com${evil}`,
        { from: `Guest Pass <no-reply@passes.example.com>${evil}`, publicBaseUrl: BASE },
      );
      for (const value of [mail.subject, mail.to, mail.from, mail.messageId]) expect(value).not.to.match(/[\r\n]/);
      const raw = await renderRawMail(mail);
      const lines = rawHeaderLines(raw.toString('latin1'));
      const names = lines.map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
      expect(names).not.to.include('bcc');
      expect(names).not.to.include('x-injected');
      expect(names.filter((n) => n === 'to')).to.have.length(1);
      expect(names.filter((n) => n === 'subject')).to.have.length(1);
      const message = parseMimeMessage(raw);
      expect(message.header('subject')).to.equal('Your guest pass for Main entrance Bcc: evil@example.com X-Injected: 1');
      // The body's own lines are not headers either: they sit inside the text part.
      expect(findPart(message, 'text/plain')!.text).to.include('Hello Ada Bcc: evil@example.com X-Injected: 1,');
    });

    it('renders as a multipart/alternative message with both parts, the stable Message-ID and the recipient', async () => {
      const mail = composePassEmail(content({ facilityName: 'Café Zürich' }), 'ada@example.com', OPTIONS);
      const message = parseMimeMessage(await renderRawMail(mail));
      expect(message.contentType).to.equal('multipart/alternative');
      expect(message.header('message-id')).to.equal(`<pass-${BATCH}@passes.example.com>`);
      expect(message.header('to')).to.equal('ada@example.com');
      expect(message.header('subject')).to.equal('Your guest pass for Café Zürich');
      expect(findPart(message, 'text/plain')!.text.replace(/\r\n/g, '\n')).to.equal(mail.text);
      expect(findPart(message, 'text/html')!.text.replace(/\r\n/g, '\n')).to.equal(mail.html);
    });
  });

  describe('SMS', () => {
    it('names the facility, date and time in UTC, and the link, in one segment', () => {
      const sms = composePassSms(content(), '+15551234567', { publicBaseUrl: BASE });
      expect(sms.to).to.equal('+15551234567');
      expect(sms.text).to.equal(`Guest pass for Main entrance on 2026-12-01 09:30 UTC: ${LINK}`);
      expect(sms.text.length).to.be.at.most(160);
    });

    it('counts passes and leaves out an absent time', () => {
      const sms = composePassSms(content({ passCount: 2, arrivalTime: null }), '+15551234567', { publicBaseUrl: BASE });
      expect(sms.text).to.equal(`2 guest passes for Main entrance on 2026-12-01: ${LINK}`);
    });

    it('shortens a long facility name to stay within 160 characters, keeping the link whole', () => {
      const sms = composePassSms(content({ facilityName: 'North campus, building 7, loading dock and visitor reception desk on level 2' }), '+15551234567', {
        publicBaseUrl: BASE,
      });
      expect(sms.text.length).to.be.at.most(160);
      expect(sms.text).to.match(/^Guest pass for North campus, .*\.\.\. on 2026-12-01 09:30 UTC: /);
      expect(sms.text.endsWith(LINK)).to.equal(true);
    });

    it('puts a facility name on one line', () => {
      const sms = composePassSms(content({ facilityName: 'Main\r\nentrance\t' }), '+15551234567', { publicBaseUrl: BASE });
      expect(sms.text).to.match(/^Guest pass for Main entrance on /);
    });
  });

  it('oneLine drops control characters and line separators', () => {
    expect(oneLine(' a\r\nb\u0000c\u2028d\u0085e  ')).to.equal('a b c d e');
  });

  describe("the facility's time zone", () => {
    // 09:30 in Berlin (CET, +01:00) on 1 December 2026; the window ends at local midnight.
    const berlin = content({ timeZone: 'Europe/Berlin', validFrom: '2026-12-01T08:30:00.000Z', validUntil: '2026-12-01T22:59:59.999Z' });

    it('shows arrival and validity in the local time of a Europe/Berlin facility, naming the zone', () => {
      const mail = composePassEmail(berlin, 'ada@example.com', OPTIONS);
      expect(mail.text).to.include('Arrival: Tuesday 1 December 2026 at 09:30 Europe/Berlin');
      expect(mail.text).to.include('Valid: from Tuesday 1 December 2026, 09:30 Europe/Berlin until Tuesday 1 December 2026, 23:59 Europe/Berlin');
      expect(mail.text).to.not.include('UTC');
      expect(mail.html).to.include('Tuesday 1 December 2026 at 09:30 Europe/Berlin');
      expect(composePassSms(berlin, '+4915112345678', OPTIONS).text).to.equal(`Guest pass for Main entrance on 2026-12-01 09:30 Europe/Berlin: ${LINK}`);
    });

    it('shows an America/New_York facility its own wall clock, the local day included', () => {
      // 20:00 on 30 November in New York (EST, -05:00) is already 1 December in UTC.
      const newYork = content({ timeZone: 'America/New_York', arrivalDate: '2026-11-30', arrivalTime: '20:00', validFrom: '2026-12-01T01:00:00.000Z', validUntil: '2026-12-01T04:59:59.999Z' });
      const mail = composePassEmail(newYork, 'ada@example.com', OPTIONS);
      expect(mail.text).to.include('Arrival: Monday 30 November 2026 at 20:00 America/New_York');
      expect(mail.text).to.include('Valid: from Monday 30 November 2026, 20:00 America/New_York until Monday 30 November 2026, 23:59 America/New_York');
      expect(composePassSms(newYork, '+12125550100', OPTIONS).text).to.equal(`Guest pass for Main entrance on 2026-11-30 20:00 America/New_York: ${LINK}`);
    });

    it('reads the arrival time from the window, so a pass issued in UTC before the facility had a zone shows its true local time', () => {
      const issuedInUtc = content({ timeZone: 'Europe/Berlin', arrivalTime: '09:30', validFrom: '2026-12-01T09:30:00.000Z' });
      expect(composePassSms(issuedInUtc, '+4915112345678', OPTIONS).text).to.include('on 2026-12-01 10:30 Europe/Berlin');
    });
  });
});
