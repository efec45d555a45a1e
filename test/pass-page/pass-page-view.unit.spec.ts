// The pass page as HTML, from view models: every guest-supplied value escaped, the states of a
// pass (usable, revoked, expired, used) with a QR code only while usable, labels and accessible
// names, the confirm form and its errors, and the stylesheet allowed by its hash alone. Also the
// pure decisions behind the page (states, the form's checks) and the QR drawings' cache.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  PASS_PAGE_CONTENT_SECURITY_POLICY,
  PASS_PAGE_STYLESHEET,
  formatLocal,
  passMessagePage,
  passPage,
} from '../../command-service/pass-page/pass-page-view.js';
import {
  parseRegistration,
  passCard,
  passCardKind,
  registrationState,
  type BatchPass,
  type PassCard,
  type PassPageModel,
} from '../../command-service/pass-page/pass-page-model.js';
import { drawQrSvg, QrSvgCache, type QrSvg } from '../../command-service/pass-page/qr-svg.js';
import { csrfTokenOf, inputValue } from '../sign-in/support/browser.js';

const EVIL = '"><script>alert(1)</script>&\'`';
const ESCAPED = '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#39;&#96;';
const TOKEN = 'abcdefghijklmnopqrstuvwxyz012345';
const QR: QrSvg = { size: 37, background: 'M0 0h37v37H0z', modules: 'M4 4.5h7' };
const NOW = new Date('2026-12-01T10:00:00Z');

function model(overrides: Partial<PassPageModel> = {}): PassPageModel {
  return {
    token: TOKEN,
    firstName: 'Grace',
    facilityName: 'Main entrance',
    arrivalDate: '2026-12-01',
    timeZone: 'UTC',
    arrivalTime: '09:30',
    validFrom: new Date('2026-12-01T09:30:00Z'),
    validUntil: new Date('2026-12-02T00:00:00Z'),
    invitedBy: 'Ada Admin',
    passes: [
      { kind: 'usable', confirmed: false, qr: QR },
      { kind: 'usable', confirmed: false, qr: QR },
      { kind: 'usable', confirmed: false, qr: QR },
    ],
    registration: { state: 'open', form: { csrfToken: 'csrf-1', nameOnId: '', vehicleNumber: '', errors: { nameOnId: null, vehicleNumber: null } } },
    ...overrides,
  };
}

/** The <li> of pass `n` (1-based). */
function card(page: string, n: number): string {
  const m = new RegExp(`<li class="pass" aria-labelledby="pass-${n}">([\\s\\S]*?)</li>`).exec(page);
  if (!m) throw new Error(`no card for pass ${n}`);
  return m[1]!;
}

const svgCount = (html: string) => (html.match(/<svg\b/g) ?? []).length;

describe('pass page (HTML)', () => {
  it('is an English document with a title, one h1 and headings below it', () => {
    const page = passPage(model()).value;
    expect(page).to.match(/^<!doctype html>\n<html lang="en">/);
    expect(page).to.include('<title>Guest pass for Grace · Guest Pass</title>');
    expect(page.match(/<h1\b/g)).to.have.length(1);
    expect(page).to.include('<h1>Guest pass for Grace</h1>');
    expect(page.match(/<h2\b/g)!.length).to.be.at.least(2);
    expect(page).to.include('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(page).to.include('<meta name="robots" content="noindex, nofollow">');
  });

  it("shows arrival and validity in the facility's local time, naming its zone (Europe/Berlin, America/New_York)", () => {
    // 09:30 in Berlin (CET) is 08:30 UTC; the window ends at local midnight.
    const berlin = passPage(model({ timeZone: 'Europe/Berlin', validFrom: new Date('2026-12-01T08:30:00Z'), validUntil: new Date('2026-12-01T22:59:59.999Z') })).value;
    expect(berlin).to.include('<time datetime="09:30">09:30</time> Europe/Berlin');
    expect(berlin).to.include('<time datetime="2026-12-01T08:30:00.000Z">1 December 2026 at 09:30 Europe/Berlin</time>');
    expect(berlin).to.include('1 December 2026 at 23:59 Europe/Berlin</time>');
    expect(berlin).to.not.include('UTC');
    // 20:00 on 30 November in New York (EST) is 1 December in UTC: the local day is shown.
    const newYork = passPage(model({ timeZone: 'America/New_York', arrivalDate: '2026-11-30', arrivalTime: '20:00', validFrom: new Date('2026-12-01T01:00:00Z') })).value;
    expect(newYork).to.include('Monday, 30 November 2026').and.include('<time datetime="20:00">20:00</time> America/New_York');
    expect(newYork).to.include('30 November 2026 at 20:00 America/New_York');
  });

  it('shows the facility, arrival, the validity window in UTC and the inviter', () => {
    const page = passPage(model()).value;
    expect(page).to.include('<dd>Main entrance</dd>');
    expect(page).to.include('Tuesday, 1 December 2026');
    expect(page).to.include('<time datetime="09:30">09:30</time> UTC');
    expect(page).to.include(`<time datetime="2026-12-01T09:30:00.000Z">${formatLocal(new Date('2026-12-01T09:30:00Z'), 'UTC')}</time>`);
    expect(formatLocal(new Date('2026-12-02T13:05:00Z'), 'UTC')).to.equal('2 December 2026 at 13:05 UTC');
    expect(page).to.match(/<dt>Valid<\/dt><dd>from <time[^>]*>[^<]* UTC<\/time> until <time[^>]*>[^<]* UTC<\/time><\/dd>/);
    expect(page).to.include('<dt>Invited by</dt><dd>Ada Admin</dd>');
    expect(passPage(model({ invitedBy: null, arrivalTime: null })).value).to.not.include('Invited by').and.not.include('<time datetime="09:30"');
  });

  it('escapes every guest-supplied value: first name, facility, inviter, typed form values', () => {
    const page = passPage(
      model({
        firstName: EVIL,
        facilityName: EVIL,
        invitedBy: EVIL,
        registration: { state: 'open', form: { csrfToken: 'csrf-1', nameOnId: EVIL, vehicleNumber: EVIL, errors: { nameOnId: null, vehicleNumber: null } } },
      }),
    ).value;
    expect(page).to.not.include('<script>');
    expect(page).to.include(`<h1>Guest pass for ${ESCAPED}</h1>`);
    expect(page).to.include(`<dd>${ESCAPED}</dd>`);
    expect(page).to.include(`<dt>Invited by</dt><dd>${ESCAPED}</dd>`);
    expect(inputValue(page, 'name_on_id')).to.equal(EVIL);
    expect(inputValue(page, 'vehicle_number')).to.equal(EVIL);
    const confirmed = passPage(model({ facilityName: EVIL, registration: { state: 'confirmed' } })).value;
    expect(confirmed).to.not.include('<script>');
    expect(passMessagePage({ title: EVIL, message: EVIL }).value).to.not.include('<script>');
  });

  it('labels each pass "Pass i of n" and names each QR code for a screen reader', () => {
    const page = passPage(model()).value;
    expect(svgCount(page)).to.equal(3);
    for (const n of [1, 2, 3]) {
      const c = card(page, n);
      expect(c).to.include(`<h3 id="pass-${n}">Pass ${n} of 3</h3>`);
      expect(c).to.match(/<svg class="qr"[^>]* role="img" aria-label="QR code of pass \d of 3" aria-labelledby="pass-\d-qr"/);
      expect(c).to.include(`<title id="pass-${n}-qr">QR code of pass ${n} of 3</title>`);
      expect(c).to.include('viewBox="0 0 37 37"').and.include(`d="${QR.modules}"`);
    }
  });

  const hidden: Array<[PassCard, string]> = [
    [{ kind: 'revoked' }, 'Revoked'],
    [{ kind: 'expired' }, 'Expired'],
    [{ kind: 'used', how: 'checked_in' }, 'Used (checked in)'],
    [{ kind: 'used', how: 'checked_out' }, 'Used (checked out)'],
  ];
  for (const [state, label] of hidden) {
    it(`shows a ${label.toLowerCase()} pass as "${label}" without its QR code`, () => {
      const page = passPage(model({ passes: [{ kind: 'usable', confirmed: false, qr: QR }, state, { kind: 'usable', confirmed: true, qr: QR }] })).value;
      expect(svgCount(page)).to.equal(2);
      expect(card(page, 2)).to.include(label).and.not.include('<svg');
      expect(card(page, 1)).to.include('<svg').and.include('Valid');
      expect(card(page, 3)).to.include('Valid · visit confirmed');
    });
  }

  it('says so when no pass opens the doors any more', () => {
    const page = passPage(model({ passes: [{ kind: 'revoked' }, { kind: 'expired' }], registration: { state: 'closed' } })).value;
    expect(svgCount(page)).to.equal(0);
    expect(page).to.include('None of these passes opens the doors any more.');
    expect(page).to.not.include('<form');
  });

  it('offers the confirm form with a CSRF token, labelled fields and limits, posting to the page', () => {
    const page = passPage(model()).value;
    expect(page).to.include(`<form method="post" action="/p/${TOKEN}/register" novalidate>`);
    expect(csrfTokenOf(page)).to.equal('csrf-1');
    expect(page).to.include('<label for="name_on_id">Name as on your ID</label>');
    expect(page).to.include('<label for="vehicle_number">Vehicle number (optional)</label>');
    expect(page).to.match(/<input type="text" id="name_on_id" name="name_on_id" value="" maxlength="100" autocomplete="name" required>/);
    expect(page).to.match(/<input type="text" id="vehicle_number"[^>]*maxlength="32"[^>]*aria-describedby="vehicle_number-hint"/);
    expect(page).to.include('<button type="submit">Confirm visit</button>');
    expect(page).to.include(`href="/p/${TOKEN}/calendar.ics" download="guest-pass.ics"`);
  });

  it('ties a form error to its field', () => {
    const page = passPage(
      model({ registration: { state: 'open', form: { csrfToken: 'c', nameOnId: '', vehicleNumber: '', errors: { nameOnId: 'Enter your name.', vehicleNumber: null } } } }),
    ).value;
    expect(page).to.match(/id="name_on_id"[^>]*aria-describedby="name_on_id-error" aria-invalid="true"/);
    expect(page).to.include('<p id="name_on_id-error" class="error" role="alert">Enter your name.</p>');
  });

  it('says "Visit confirmed" without a form once confirmed', () => {
    const page = passPage(model({ registration: { state: 'confirmed' } })).value;
    expect(page).to.include('Visit confirmed');
    expect(page).to.not.include('<form');
    expect(page).to.not.include('name="csrf"');
  });

  it('has no script, no handler attribute, no remote asset, and only the stylesheet the policy hashes', () => {
    const page = passPage(model()).value;
    expect(page).to.not.match(/<script\b/);
    expect(page).to.not.match(/\son[a-z]+=/i);
    expect(page).to.not.match(/(src|href)="(https?:)?\/\//);
    expect(page).to.not.match(/\sstyle=/);
    const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(styles).to.deep.equal([PASS_PAGE_STYLESHEET]);
    const hash = createHash('sha256').update(styles[0]!, 'utf8').digest('base64');
    expect(PASS_PAGE_CONTENT_SECURITY_POLICY).to.equal(
      `default-src 'none'; style-src 'sha256-${hash}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
  });
});

describe('pass page decisions', () => {
  const pass = (status: BatchPass['status'], validUntil = '2026-12-02T00:00:00Z'): BatchPass => ({ publicId: 'gst_1', status, validUntil: new Date(validUntil) });

  it('tells each state: revoked and used win over expiry', () => {
    expect(passCardKind(pass('expected'), NOW)).to.equal('usable');
    expect(passCardKind(pass('registered'), NOW)).to.equal('usable');
    expect(passCardKind(pass('expected', '2026-12-01T10:00:00Z'), NOW)).to.equal('expired');
    expect(passCardKind(pass('cancelled', '2020-01-01T00:00:00Z'), NOW)).to.equal('revoked');
    expect(passCardKind(pass('checked_in', '2020-01-01T00:00:00Z'), NOW)).to.equal('used');
    expect(passCard(pass('checked_out'), NOW, null)).to.deep.equal({ kind: 'used', how: 'checked_out' });
    expect(passCard(pass('registered'), NOW, QR)).to.deep.equal({ kind: 'usable', confirmed: true, qr: QR });
    expect(() => passCard(pass('expected'), NOW, null)).to.throw();
  });

  it('opens the form while a usable pass is expected, confirms when all usable are registered, closes otherwise', () => {
    expect(registrationState([pass('expected'), pass('cancelled')], NOW)).to.equal('open');
    expect(registrationState([pass('registered'), pass('cancelled')], NOW)).to.equal('confirmed');
    expect(registrationState([pass('cancelled'), pass('expected', '2026-11-30T00:00:00Z')], NOW)).to.equal('closed');
    expect(registrationState([pass('checked_in')], NOW)).to.equal('closed');
  });

  it('checks the form: name required and at most 100 characters, vehicle optional and at most 32, trimmed', () => {
    expect(parseRegistration({ nameOnId: '  Grace Brewster Hopper ', vehicleNumber: ' ' })).to.deep.equal({
      ok: true,
      value: { nameOnId: 'Grace Brewster Hopper', vehicleNumber: null },
    });
    expect(parseRegistration({ nameOnId: 'Grace', vehicleNumber: ' B-GH 1906 ' })).to.deep.include({ ok: true, value: { nameOnId: 'Grace', vehicleNumber: 'B-GH 1906' } });
    expect(parseRegistration({ nameOnId: 'é'.repeat(100), vehicleNumber: 'x'.repeat(32) }).ok).to.equal(true);
    const bad = parseRegistration({ nameOnId: '   ', vehicleNumber: 'x'.repeat(33) });
    expect(bad.ok).to.equal(false);
    if (!bad.ok) {
      expect(bad.errors.nameOnId).to.be.a('string');
      expect(bad.errors.vehicleNumber).to.be.a('string');
    }
    expect(parseRegistration({ nameOnId: 'x'.repeat(101), vehicleNumber: '' }).ok).to.equal(false);
    expect(parseRegistration({ nameOnId: 'Grace\nHopper', vehicleNumber: '' }).ok).to.equal(false);
  });
});

describe('QR drawings', () => {
  it('draws with qrcode and keeps only numbers and path data', async () => {
    const svg = await drawQrSvg('hello-pass-value');
    expect(svg.size).to.be.greaterThan(20);
    expect(svg.background).to.equal(`M0 0h${svg.size}v${svg.size}H0z`);
    expect(svg.modules).to.match(/^[Mmh0-9. ]+$/);
  });

  it('caches by value within its TTL, never past the pass window, bounded, and forgets on demand', async () => {
    let now = 1_000_000;
    const cache = new QrSvgCache({ maxEntries: 2, ttlMs: 60_000, now: () => now });
    const first = await cache.draw('v1', now + 3_600_000);
    expect(await cache.draw('v1', now + 3_600_000)).to.equal(first);
    expect(cache.holds('v1')).to.equal(true);
    now += 60_000;
    expect(cache.holds('v1')).to.equal(false); // TTL
    await cache.draw('v2', now + 10);
    now += 10;
    expect(cache.holds('v2')).to.equal(false); // the pass's window ended first
    await cache.draw('a', now + 3_600_000);
    await cache.draw('b', now + 3_600_000);
    await cache.draw('c', now + 3_600_000);
    expect(cache.size).to.equal(2);
    expect(cache.holds('a')).to.equal(false); // least recently used
    cache.forget('b');
    expect(cache.holds('b')).to.equal(false);
    await cache.draw('gone', now - 1); // already invisible: drawn, not kept
    expect(cache.holds('gone')).to.equal(false);
  });
});
