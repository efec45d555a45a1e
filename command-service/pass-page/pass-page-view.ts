// The pass page's HTML, pure: a view model in, escaped markup out (the sign-in pages' `html`
// template escapes every value that is not itself markup). Mobile first and usable with a screen
// reader: one h1, headings for each part, each QR code an image with an accessible name, states
// said in words rather than colour alone. The stylesheet is inline and allowed by its hash in the
// content security policy, so the page needs nothing from any other origin, nor any other request.
import { localArrival } from '../../shared/domain/time-zone.js';
import { createHash } from 'node:crypto';
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import { csrfField, describedBy, fieldError, SERVICE_NAME } from '../sign-in/pages/layout.js';
import { NAME_ON_ID_MAX, VEHICLE_NUMBER_MAX, type PassCard, type PassPageModel, type RegistrationForm } from './pass-page-model.js';
import type { QrSvg } from './qr-svg.js';

// Contrast (WCAG 1.4.3, at least 4.5:1): body text #1b1b1b on #fff and #f6f6f4 (about 17:1), the
// header's #fff on #1f3a5f (11:1), #b00020 (6.6:1), #1e6b34 (6.4:1) and #4a4a4a (8.9:1) on #fff.
export const PASS_PAGE_STYLESHEET = `
:root { color-scheme: light; }
body { font-family: system-ui, sans-serif; line-height: 1.5; margin: 0; color: #1b1b1b; background: #f6f6f4; }
header { background: #1f3a5f; color: #fff; padding: 0.5rem 0.75rem; }
header p { margin: 0; font-weight: 600; }
main { max-width: 32rem; margin: 0 auto; padding: 0.5rem 0.75rem 2rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0.75rem 0; }
h2 { font-size: 1.25rem; line-height: 1.3; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1.05rem; margin: 0; }
a { color: #1f3a5f; }
.facts { margin: 0; display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.25rem 0.75rem; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.passes { list-style: none; margin: 0; padding: 0; }
.pass { background: #fff; border: 1px solid #8a8a8a; border-radius: 8px; padding: 0.75rem; margin: 0 0 1rem; }
.qr { display: block; box-sizing: border-box; width: 100%; min-width: 240px; max-width: 22rem; height: auto; aspect-ratio: 1 / 1; margin: 0.5rem auto 0; }
.status { margin: 0.25rem 0 0; font-weight: 600; }
.status-ok { color: #1e6b34; }
.status-revoked { color: #b00020; }
.status-off { color: #4a4a4a; }
.note { margin: 0.25rem 0 0; color: #4a4a4a; }
.notice { background: #fff; border-left: 4px solid #1e6b34; padding: 0.5rem 0.75rem; }
label { display: block; font-weight: 600; margin-top: 0.75rem; }
.hint { display: block; color: #4a4a4a; font-weight: 400; }
input[type=text] { width: 100%; box-sizing: border-box; padding: 0.5rem; font-size: 1rem; border: 1px solid #6b6b6b; border-radius: 4px; }
input[aria-invalid=true] { border: 2px solid #b00020; }
button, .button-link { display: inline-block; font-size: 1rem; padding: 0.5rem 1rem; border-radius: 4px; border: 1px solid #1f3a5f; font-weight: 600; }
button { margin-top: 1rem; background: #1f3a5f; color: #fff; cursor: pointer; }
.button-link { background: #fff; color: #1f3a5f; text-decoration: none; }
:focus-visible { outline: 3px solid #1b1b1b; outline-offset: 2px; }
.error { color: #b00020; font-weight: 600; margin: 0.25rem 0 0; }
`;

/** The stylesheet's CSP source: the browser applies the inline <style> only while it matches. */
export const PASS_PAGE_STYLE_SOURCE = `'sha256-${createHash('sha256').update(PASS_PAGE_STYLESHEET, 'utf8').digest('base64')}'`;

/** No script at all; the one inline stylesheet by hash; forms only to this origin; never framed. */
export const PASS_PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src ${PASS_PAGE_STYLE_SOURCE}`,
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The paths of one pass page. The token is base64url (checked before any of these is made). */
export const passPagePaths = (token: string) => ({
  page: `/p/${token}`,
  calendar: `/p/${token}/calendar.ics`,
  register: `/p/${token}/register`,
});

function frame(title: string, main: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title} · ${SERVICE_NAME}</title>
<style>${PASS_PAGE_STYLESHEET_HTML}</style>
</head>
<body>
<header><p>${SERVICE_NAME}</p></header>
<main>
${main}
</main>
</body>
</html>
`;
}

// The stylesheet is our own constant with nothing to escape (checked below): emitted as is, so
// its hash is the hash of what the browser reads.
const PASS_PAGE_STYLESHEET_HTML = html`${PASS_PAGE_STYLESHEET}`;
if (PASS_PAGE_STYLESHEET_HTML.value !== PASS_PAGE_STYLESHEET) throw new Error('the pass page stylesheet must need no escaping');

const DAY = new Intl.DateTimeFormat('en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
const MOMENTS = new Map<string, Intl.DateTimeFormat>();

/** One formatter a zone (a facility's zone is one of a few hundred names Intl accepted). */
function momentIn(zone: string): Intl.DateTimeFormat {
  let format = MOMENTS.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: zone });
    if (MOMENTS.size >= 1000) MOMENTS.clear();
    MOMENTS.set(zone, format);
  }
  return format;
}

/** `YYYY-MM-DD` as "Tuesday, 1 December 2026". */
export function formatDay(date: string): string {
  const day = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(day.getTime()) ? date : DAY.format(day);
}

/** An instant as the wall clock of `zone` shows it, naming the zone: "1 December 2026 at 09:30 Europe/Berlin". */
export function formatLocal(instant: Date, zone: string): string {
  return `${momentIn(zone).format(instant)} ${zone}`;
}

/** The QR code as an inline SVG image named for a screen reader. */
function qrImage(qr: QrSvg, id: string, name: string): SafeHtml {
  return html`<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${qr.size} ${qr.size}" shape-rendering="crispEdges" role="img" aria-label="${name}" aria-labelledby="${id}" focusable="false"><title id="${id}">${name}</title><path fill="#ffffff" d="${qr.background}"/><path stroke="#000000" d="${qr.modules}"/></svg>`;
}

function cardStatus(card: PassCard): SafeHtml {
  switch (card.kind) {
    case 'usable':
      return card.confirmed
        ? html`<p class="status status-ok">Valid · visit confirmed</p>`
        : html`<p class="status status-ok">Valid</p>`;
    case 'revoked':
      return html`<p class="status status-revoked">Revoked</p><p class="note">This pass was withdrawn and no longer opens the doors.</p>`;
    case 'expired':
      return html`<p class="status status-off">Expired</p><p class="note">The time this pass was valid for has passed.</p>`;
    case 'used':
      return html`<p class="status status-off">${card.how === 'checked_out' ? 'Used (checked out)' : 'Used (checked in)'}</p>`;
  }
}

function passCardHtml(card: PassCard, index: number, count: number): SafeHtml {
  const label = `Pass ${index + 1} of ${count}`;
  const id = `pass-${index + 1}`;
  return html`<li class="pass" aria-labelledby="${id}">
<h3 id="${id}">${label}</h3>
${cardStatus(card)}
${card.kind === 'usable' && qrImage(card.qr, `${id}-qr`, `QR code of ${label.toLowerCase()}`)}
</li>
`;
}

function registrationForm(model: PassPageModel, form: RegistrationForm): SafeHtml {
  const { nameOnId, vehicleNumber } = form.errors;
  return html`<section aria-labelledby="confirm-heading">
<h2 id="confirm-heading">Confirm your visit</h2>
<p>Let ${model.facilityName} know you are coming: enter your name as it is written on the ID you will bring.</p>
<form method="post" action="${passPagePaths(model.token).register}" novalidate>
${csrfField(form.csrfToken)}
<label for="name_on_id">Name as on your ID</label>
<input type="text" id="name_on_id" name="name_on_id" value="${form.nameOnId}" maxlength="${NAME_ON_ID_MAX}" autocomplete="name" required${describedBy('name_on_id-error', nameOnId)}>
${fieldError('name_on_id-error', nameOnId)}
<label for="vehicle_number">Vehicle number (optional)</label>
<span class="hint" id="vehicle_number-hint">The number plate, if you come by car.</span>
<input type="text" id="vehicle_number" name="vehicle_number" value="${form.vehicleNumber}" maxlength="${VEHICLE_NUMBER_MAX}" autocomplete="off"${describedBy('vehicle_number-error', vehicleNumber, 'vehicle_number-hint')}>
${fieldError('vehicle_number-error', vehicleNumber)}
<button type="submit">Confirm visit</button>
</form>
</section>
`;
}

function registration(model: PassPageModel): SafeHtml {
  switch (model.registration.state) {
    case 'open':
      return registrationForm(model, model.registration.form);
    case 'confirmed':
      return html`<section aria-labelledby="confirm-heading">
<h2 id="confirm-heading">Visit confirmed</h2>
<p class="notice" role="status">Thank you: ${model.facilityName} knows you are coming.</p>
</section>
`;
    case 'closed':
      return html``;
  }
}

export function passPage(model: PassPageModel): SafeHtml {
  const count = model.passes.length;
  const paths = passPagePaths(model.token);
  const anyUsable = model.passes.some((p) => p.kind === 'usable');
  const arrival = localArrival(model.timeZone, model.arrivalDate, model.arrivalTime, model.validFrom);
  return frame(
    `Guest pass for ${model.firstName}`,
    html`<h1>Guest pass for ${model.firstName}</h1>
<section aria-labelledby="visit-heading">
<h2 id="visit-heading">Your visit</h2>
<dl class="facts">
<dt>Place</dt><dd>${model.facilityName}</dd>
<dt>Arrival</dt><dd><time datetime="${arrival.date}">${formatDay(arrival.date)}</time>${arrival.time !== null && html`, <time datetime="${arrival.time}">${arrival.time}</time> ${model.timeZone}`}</dd>
<dt>Valid</dt><dd>from <time datetime="${model.validFrom.toISOString()}">${formatLocal(model.validFrom, model.timeZone)}</time> until <time datetime="${model.validUntil.toISOString()}">${formatLocal(model.validUntil, model.timeZone)}</time></dd>
${model.invitedBy !== null && html`<dt>Invited by</dt><dd>${model.invitedBy}</dd>\n`}</dl>
<p><a class="button-link" href="${paths.calendar}" download="guest-pass.ics">Add to calendar</a></p>
</section>
<section aria-labelledby="passes-heading">
<h2 id="passes-heading">${count === 1 ? 'Your pass' : 'Your passes'}</h2>
<p>${anyUsable ? 'Hold a QR code up to the door reader at the entrance.' : 'None of these passes opens the doors any more.'}</p>
<ol class="passes">
${model.passes.map((card, i) => passCardHtml(card, i, count))}</ol>
</section>
${registration(model)}`,
  );
}

/** A page that only says what happened (not found, refused, too many requests, ...). */
export function passMessagePage(input: { readonly title: string; readonly message: string; readonly link?: { readonly href: string; readonly text: string } }): SafeHtml {
  return frame(
    input.title,
    html`<h1>${input.title}</h1>
<p>${input.message}</p>
${input.link !== undefined && html`<p><a href="${input.link.href}">${input.link.text}</a></p>\n`}`,
  );
}
