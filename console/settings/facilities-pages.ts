// /settings/facilities: the organization's facilities, and the form that adds or edits one.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { FacilityRow } from '../../shared/db/read-models.js';
import { knownTimeZones } from '../../shared/domain/time-zone.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable } from '../pages/data-table.js';
import { button, buttonLink, errorSummary, hasErrors, postForm, selectField, textArea, textInput, type FormErrors } from '../pages/form-fields.js';

export type FacilityListItem = Pick<FacilityRow, 'facility_id' | 'name' | 'description' | 'is_active' | 'suspended' | 'time_zone'>;

const NOTICES: Readonly<Record<string, string>> = {
  added: 'Facility added.',
  saved: 'Facility saved.',
  suspended: 'Facility suspended: it takes no new passes until resumed. Passes already issued keep working.',
  resumed: 'Facility resumed: it takes new passes again.',
  deactivated: 'Facility deactivated.',
};

function status(f: FacilityListItem): SafeHtml {
  if (!f.is_active) return html`<span class="tag tag--inactive">Deactivated</span>`;
  if (f.suspended) return html`<span class="tag tag--suspended">Suspended</span>`;
  return html`<span class="tag">Active</span>`;
}

function actions(f: FacilityListItem, csrfToken: string): SafeHtml {
  if (!f.is_active) return html``;
  const base = `${CONSOLE_PATHS.facilities}/${f.facility_id}`;
  const hidden = html`<span class="visually-hidden"> ${f.name}</span>`;
  return html`<a class="button button--secondary" href="${base}/edit">Edit${hidden}</a>${postForm(
    `${base}/${f.suspended ? 'resume' : 'suspend'}`,
    csrfToken,
    html`<button type="submit" class="button button--secondary">${f.suspended ? 'Resume' : 'Suspend'}${hidden}</button>`,
  )}<a class="button button--secondary" href="${base}/deactivate">Deactivate${hidden}</a>`;
}

export function facilitiesPage(input: { user: ConsoleUser; csrfToken: string; facilities: readonly FacilityListItem[]; notice: string | null }): SafeHtml {
  const notice = input.notice !== null ? NOTICES[input.notice] : undefined;
  return consoleLayout(
    { title: 'Facilities', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.facilities },
    html`<h1>Facilities</h1>
${notice !== undefined && html`<div class="panel" role="status"><p>${notice}</p></div>`}
<p>The places a guest pass opens. Passes show their times in the facility's time zone.</p>
<p>${buttonLink(`${CONSOLE_PATHS.facilities}/new`, 'Add facility')}</p>
${dataTable({
  id: 'facilities',
  caption: 'Facilities',
  head: ['Name', 'ID', 'Status', 'Time zone', 'Description', 'Actions'],
  empty: 'No facilities yet.',
  rows: input.facilities.map((f) => [f.name, String(f.facility_id), status(f), f.time_zone, f.description ?? '—', actions(f, input.csrfToken)]),
})}`,
  );
}

export interface FacilityForm {
  readonly name: string;
  readonly description: string;
  readonly timeZone: string;
}

export const EMPTY_FACILITY_FORM: FacilityForm = { name: '', description: '', timeZone: 'UTC' };

export function facilityFormPage(input: { user: ConsoleUser; csrfToken: string; form: FacilityForm; errors: FormErrors; action: string; editing: boolean }): SafeHtml {
  const { form, errors } = input;
  const title = input.editing ? `Edit ${form.name || 'facility'}` : 'Add a facility';
  return consoleLayout(
    { title, user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.facilities, hasErrors: hasErrors(errors) },
    html`<p><a href="${CONSOLE_PATHS.facilities}">Back to facilities</a></p>
${errorSummary(errors)}
<h1>${title}</h1>
${postForm(
  input.action,
  input.csrfToken,
  html`${textInput({ name: 'name', label: 'Name', value: form.name, errors, maxlength: 200 })}
${textArea({ name: 'description', label: 'Description (optional)', hint: 'Where it is, how guests find it.', value: form.description, errors })}
${selectField({
  name: 'time_zone',
  label: 'Time zone',
  hint: "Guests see arrival and validity in this zone, and a new pass is valid for its arrival day here. Passes already issued keep their times.",
  errors,
  selected: form.timeZone,
  options: knownTimeZones().map((z) => ({ value: z, label: z.replace(/_/g, ' ') })),
})}
<p>${button(input.editing ? 'Save facility' : 'Add facility')}</p>`,
  { novalidate: true },
)}`,
  );
}
