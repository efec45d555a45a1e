// The host's pages (/passes): their monthly allowance as `used / limit / remaining`, the passes they
// created (status, what became of each channel's message, a link to each), the create form, the
// result of a create (the allowance after it) and one pass with its guest's pass page link.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { DeliveryStatus } from '../../shared/db/read-models.js';
import type { Usage } from '../../query-service/user/list-user-passes.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable, utcDateTime } from '../pages/data-table.js';
import { button, buttonLink, errorSummary, hasErrors, postForm, selectField, textArea, textInput, type Choice, type FormErrors } from '../pages/form-fields.js';

interface PageBase {
  readonly user: ConsoleUser;
  readonly csrfToken: string;
}

export interface PassListEntry {
  readonly publicId: string;
  readonly guestName: string;
  readonly facilityName: string | null;
  readonly arrival: string;
  readonly status: string;
  readonly createdAt: Date | string;
  readonly email: DeliveryStatus | null | undefined;
  readonly sms: DeliveryStatus | null | undefined;
}

export const STATUS_TEXT: Readonly<Record<string, string>> = {
  expected: 'Expected',
  registered: 'Registered',
  checked_in: 'On site',
  checked_out: 'Left',
  cancelled: 'Revoked',
};

function deliveryText(status: DeliveryStatus | null | undefined): string {
  if (status === undefined) return 'Not known yet';
  if (status === null) return 'Not requested';
  return { pending: 'Sending', sent: 'Sent', failed: 'Failed' }[status];
}

export function usageBlock(usage: Usage, caption: string): SafeHtml {
  return html`<h2 id="usage-title">${caption}</h2>
<ul class="stats" aria-labelledby="usage-title">
<li><strong>${usage.used}</strong> used</li>
<li><strong>${usage.limit}</strong> limit</li>
<li><strong>${usage.remaining}</strong> remaining</li>
</ul>`;
}

export function passesPage(input: PageBase & { readonly usage: Usage; readonly passes: readonly PassListEntry[]; readonly nextHref: string | null; readonly notice: string | null }): SafeHtml {
  const rows = input.passes.map((p) => [
    html`<a href="${CONSOLE_PATHS.passes}/${p.publicId}">${p.guestName}</a>`,
    STATUS_TEXT[p.status] ?? p.status,
    p.facilityName ?? '—',
    p.arrival,
    deliveryText(p.email),
    deliveryText(p.sms),
    utcDateTime(p.createdAt),
  ]);
  return consoleLayout(
    { title: 'Your guest passes', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.passes },
    html`<h1>Your guest passes</h1>
${input.notice !== null && html`<div class="panel" role="status"><p>${input.notice}</p></div>`}
<p>${buttonLink(`${CONSOLE_PATHS.passes}/new`, 'Create pass')}</p>
${usageBlock(input.usage, 'Your allowance this month')}
${dataTable({
  id: 'passes',
  caption: 'Passes you created, newest first (times in UTC)',
  head: ['Guest', 'Status', 'Facility', 'Arrival', 'Email', 'SMS', 'Created'],
  rows,
  empty: 'You have not created any passes yet.',
})}
${input.nextHref !== null && html`<p><a href="${input.nextHref}">Older passes</a></p>`}`,
  );
}

export interface PassForm {
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string;
  readonly facilityId: string;
  readonly arrivalDate: string;
  readonly arrivalTime: string;
  readonly quantity: string;
  readonly notes: string;
}

export const EMPTY_PASS_FORM: PassForm = { firstName: '', lastName: '', email: '', phone: '', facilityId: '', arrivalDate: '', arrivalTime: '', quantity: '1', notes: '' };

export function passFormPage(input: PageBase & { readonly usage: Usage; readonly facilities: readonly Choice[]; readonly form: PassForm; readonly errors: FormErrors }): SafeHtml {
  const { form, errors } = input;
  const body =
    input.facilities.length === 0
      ? html`<p class="notice">No facility of your organization accepts passes at the moment. Ask an administrator.</p>`
      : postForm(
          `${CONSOLE_PATHS.passes}/new`,
          input.csrfToken,
          html`${textInput({ name: 'first_name', label: 'Guest’s first name', errors, value: form.firstName, autocomplete: 'off', maxlength: 100 })}
${textInput({ name: 'last_name', label: 'Guest’s last name (optional)', errors, value: form.lastName, autocomplete: 'off', maxlength: 100 })}
${textInput({ name: 'email', label: 'Guest’s email address', hint: 'Give an email address, a mobile number or both: the guest’s pass link is sent there.', errors, value: form.email, type: 'email', autocomplete: 'off' })}
${textInput({ name: 'phone', label: 'Guest’s mobile number', hint: 'With the country code, for example +44 7700 900123.', errors, value: form.phone, autocomplete: 'off' })}
${selectField({ name: 'facility_id', label: 'Facility', errors, options: input.facilities, selected: form.facilityId })}
${textInput({ name: 'arrival_date', label: 'Arrival date', hint: "YYYY-MM-DD, in the facility's time zone.", errors, value: form.arrivalDate, type: 'date', width: 'short' })}
${textInput({ name: 'arrival_time', label: 'Arrival time (optional)', hint: "24-hour HH:MM, in the facility's time zone. Without one, the pass opens at the start of the day there.", errors, value: form.arrivalTime, width: 'short' })}
${textInput({ name: 'quantity', label: 'Number of passes', hint: 'From 1 to 10: one pass link for all of them.', errors, value: form.quantity, type: 'number', width: 'short' })}
${textArea({ name: 'notes', label: 'Notes (optional)', errors, value: form.notes })}
<div class="actions">${button('Create pass')} <a class="button button--secondary" href="${CONSOLE_PATHS.passes}">Cancel</a></div>`,
          { novalidate: true },
        );
  return consoleLayout(
    { title: 'Create a guest pass', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.passes, hasErrors: hasErrors(errors) },
    html`${errorSummary(errors)}<h1>Create a guest pass</h1>
${usageBlock(input.usage, 'Your allowance this month')}
${body}`,
  );
}

export function passCreatedPage(input: PageBase & { readonly usage: Usage; readonly quantity: number; readonly passLink: string; readonly firstPublicId: string }): SafeHtml {
  return consoleLayout(
    { title: 'Pass created', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.passes },
    html`<div class="panel" role="status">
<h1>${input.quantity === 1 ? 'Pass created' : `${input.quantity} passes created`}</h1>
<p>The guest’s message with their pass link is on its way.</p>
</div>
<dl class="facts"><dt>Pass page</dt><dd><a href="${input.passLink}">${input.passLink}</a></dd></dl>
${usageBlock(input.usage, 'Your allowance this month, after this')}
<p><a class="button button--primary" href="${CONSOLE_PATHS.passes}/${input.firstPublicId}">View the pass</a> <a class="button button--secondary" href="${CONSOLE_PATHS.passes}">Back to your passes</a></p>`,
  );
}

export interface PassDetail extends PassListEntry {
  readonly passLink: string | null;
  readonly batchSize: number;
}

export function passDetailPage(input: PageBase & { readonly pass: PassDetail; readonly notice: string | null; readonly refusal?: string | null }): SafeHtml {
  const p = input.pass;
  const active = p.status === 'expected' || p.status === 'registered';
  // Resending needs somewhere to send to and a pass still to use (the use case checks again).
  const resendable = active && p.passLink !== null && ((p.email ?? null) !== null || (p.sms ?? null) !== null);
  const refusal = input.refusal ?? null;
  return consoleLayout(
    { title: `Pass for ${p.guestName}`, user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.passes },
    html`${input.notice !== null && html`<div class="panel" role="status"><p>${input.notice}</p></div>`}
${refusal !== null && html`<div class="error-summary" role="alert"><p>${refusal}</p></div>`}
<h1>Pass for ${p.guestName}</h1>
<dl class="facts">
<dt>Status</dt><dd>${STATUS_TEXT[p.status] ?? p.status}</dd>
<dt>Facility</dt><dd>${p.facilityName ?? '—'}</dd>
<dt>Arrival</dt><dd>${p.arrival}</dd>
<dt>Email</dt><dd>${deliveryText(p.email)}</dd>
<dt>SMS</dt><dd>${deliveryText(p.sms)}</dd>
<dt>Passes in the link</dt><dd>${p.batchSize}</dd>
<dt>Pass page</dt><dd>${p.passLink === null ? 'No longer available (the guest’s details were erased)' : html`<a href="${p.passLink}">Open the guest’s pass page</a>`}</dd>
<dt>Pass id</dt><dd><code>${p.publicId}</code></dd>
</dl>
${resendable && postForm(`${CONSOLE_PATHS.passes}/${p.publicId}/resend`, input.csrfToken, html`<p>Sends the guest’s message again, with the same link (at most once every 10 minutes).</p>
<div class="actions">${button('Resend message', { variant: 'secondary' })}</div>`)}
<div class="actions">
${active && html`<a class="button button--warning" href="${CONSOLE_PATHS.passes}/${p.publicId}/revoke">Revoke</a>`}
<a class="button button--secondary" href="${CONSOLE_PATHS.passes}">Back to your passes</a>
</div>`,
  );
}

/** The 402 in words: what the allowance is, what is used, what the request asked, what to do. */
export function quotaMessage(limit: number, current: number, requested: number): string {
  const remaining = Math.max(0, limit - current);
  return `Your monthly allowance is ${limit} passes and you have used ${current}, so ${remaining} remain${remaining === 1 ? 's' : ''}; ` +
    `this would need ${requested}. Create ${remaining === 0 ? 'passes again next month' : `at most ${remaining}`}, or ask an administrator to raise your allowance.`;
}
