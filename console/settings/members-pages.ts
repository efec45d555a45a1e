// The member directory's pages (/settings/members): the list (search, status, paging; an admin
// sees the contact tier, as an API key with org:members:contact:read does), one member, the add
// and edit form, the erase confirmation, the CSV upload and an import's progress and report.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable, utcDateTime } from '../pages/data-table.js';
import {
  button,
  buttonLink,
  choices,
  errorSummary,
  hasErrors,
  hiddenField,
  NO_ERRORS,
  postForm,
  selectField,
  textInput,
  type FormErrors,
} from '../pages/form-fields.js';
import type { ImportJob } from './member-import-jobs.js';
import { MAX_REPORTED } from './member-import-jobs.js';

interface PageBase {
  readonly user: ConsoleUser;
  readonly csrfToken: string;
}

export interface MemberView {
  readonly id: string;
  readonly name: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly jobTitle: string | null;
  readonly department: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly status: string;
  readonly createdAt: string | null;
}

const current = CONSOLE_PATHS.members;

function displayName(m: MemberView): string {
  return m.name.trim() === '' ? 'Erased member' : m.name;
}

export function membersPage(
  input: PageBase & {
    readonly members: readonly MemberView[];
    readonly search: string;
    readonly status: string;
    readonly total: number | null;
    readonly nextHref: string | null;
    readonly notice: string | null;
  },
): SafeHtml {
  const rows = input.members.map((m) => [
    html`<a href="${current}/${m.id}">${displayName(m)}</a>`,
    m.email ?? '—',
    m.phone ?? '—',
    m.jobTitle ?? '—',
    m.department ?? '—',
    m.status === 'active' ? 'Active' : html`<span class="tag tag--inactive">Inactive</span>`,
  ]);
  return consoleLayout(
    { title: 'Members', user: input.user, csrfToken: input.csrfToken, current },
    html`<h1>Members</h1>
${input.notice !== null && html`<div class="panel" role="status"><p>${input.notice}</p></div>`}
<div class="actions">${buttonLink(`${current}/new`, 'Add member')} <a class="button button--secondary" href="${current}/import">Import from a CSV file</a></div>
<form method="get" action="${current}" class="inline-form" role="search">
${textInput({ name: 'search', label: 'Search', hint: 'Part of a name, or a whole email address or phone number.', errors: NO_ERRORS, value: input.search })}
${selectField({
  name: 'status',
  label: 'Status',
  errors: NO_ERRORS,
  options: [
    { value: 'active', label: 'Active' },
    { value: 'inactive', label: 'Inactive' },
    { value: 'all', label: 'All' },
  ],
  selected: input.status,
})}
<div class="field"><button type="submit" class="button button--secondary">Search</button></div>
</form>
${input.total !== null && html`<p>${input.total} member${input.total === 1 ? '' : 's'}.</p>`}
${dataTable({ id: 'members', caption: 'Members, newest first', head: ['Name', 'Email', 'Phone', 'Job title', 'Department', 'Status'], rows, empty: input.search === '' ? 'No members here yet.' : 'No member matches this search.' })}
${input.nextHref !== null && html`<p><a href="${input.nextHref}">Next page</a></p>`}`,
  );
}

export function memberPage(input: PageBase & { readonly member: MemberView; readonly notice: string | null }): SafeHtml {
  const m = input.member;
  const path = `${current}/${m.id}`;
  return consoleLayout(
    { title: displayName(m), user: input.user, csrfToken: input.csrfToken, current },
    html`${input.notice !== null && html`<div class="panel" role="status"><p>${input.notice}</p></div>`}
<h1>${displayName(m)}</h1>
<dl class="facts">
<dt>Status</dt><dd>${m.status === 'active' ? 'Active' : 'Inactive'}</dd>
<dt>Email</dt><dd>${m.email ?? '—'}</dd>
<dt>Phone</dt><dd>${m.phone ?? '—'}</dd>
<dt>Job title</dt><dd>${m.jobTitle ?? '—'}</dd>
<dt>Department</dt><dd>${m.department ?? '—'}</dd>
<dt>Added</dt><dd>${m.createdAt === null ? '—' : utcDateTime(m.createdAt)}</dd>
<dt>Member id</dt><dd><code>${m.id}</code></dd>
</dl>
<div class="actions">
${m.name.trim() !== '' && html`<a class="button button--secondary" href="${path}/edit">Edit</a>`}
${postForm(`${path}/${m.status === 'active' ? 'deactivate' : 'reactivate'}`, input.csrfToken, button(m.status === 'active' ? 'Deactivate' : 'Reactivate', { variant: 'secondary' }), { className: 'inline-form' })}
<a class="button button--warning" href="${path}/erase">Erase</a>
</div>
<p><a href="${current}">Back to members</a></p>`,
  );
}

export interface MemberForm {
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string;
  readonly jobTitle: string;
  readonly department: string;
}

export const EMPTY_MEMBER_FORM: MemberForm = { firstName: '', lastName: '', email: '', phone: '', jobTitle: '', department: '' };

export function memberFormPage(input: PageBase & { readonly form: MemberForm; readonly errors: FormErrors; readonly action: string; readonly editing: boolean; readonly backHref: string }): SafeHtml {
  const { form, errors } = input;
  const title = input.editing ? 'Edit member' : 'Add a member';
  return consoleLayout(
    { title, user: input.user, csrfToken: input.csrfToken, current, hasErrors: hasErrors(errors) },
    html`${errorSummary(errors)}<h1>${title}</h1>
${postForm(
  input.action,
  input.csrfToken,
  html`${textInput({ name: 'first_name', label: 'First name', errors, value: form.firstName, autocomplete: 'off' })}
${textInput({ name: 'last_name', label: 'Last name', errors, value: form.lastName, autocomplete: 'off' })}
${textInput({ name: 'email', label: 'Email address (optional)', errors, value: form.email, type: 'email', autocomplete: 'off' })}
${textInput({ name: 'phone', label: 'Phone number (optional)', errors, value: form.phone, autocomplete: 'off' })}
${textInput({ name: 'job_title', label: 'Job title (optional)', errors, value: form.jobTitle })}
${textInput({ name: 'department', label: 'Department (optional)', errors, value: form.department })}
<div class="actions">${button(input.editing ? 'Save changes' : 'Add member')} <a class="button button--secondary" href="${input.backHref}">Cancel</a></div>`,
  { novalidate: true },
)}`,
  );
}

export function eraseMemberPage(input: PageBase & { readonly member: MemberView; readonly errors: FormErrors }): SafeHtml {
  const m = input.member;
  return consoleLayout(
    { title: `Erase ${displayName(m)}?`, user: input.user, csrfToken: input.csrfToken, current, hasErrors: hasErrors(input.errors) },
    html`${errorSummary(input.errors)}<h1>Erase ${displayName(m)}?</h1>
<p class="warning-text"><strong>Their personal data can never be read again, in the directory or in any record of the past. This cannot be undone.</strong></p>
${postForm(
  `${current}/${m.id}/erase`,
  input.csrfToken,
  html`${choices({
    name: 'what',
    label: 'What to erase',
    kind: 'radio',
    errors: input.errors,
    options: [
      { value: 'contact', label: 'Email address and phone number', hint: 'The name stays in the directory.' },
      { value: 'all', label: 'Name, email address and phone number', hint: 'The member stays listed without a name.' },
    ],
    checked: [],
  })}
${hiddenField('confirm', 'yes')}
<div class="actions">${button('Erase', { variant: 'warning' })} <a class="button button--secondary" href="${current}/${m.id}">Go back</a></div>`,
)}`,
  );
}

export function importFormPage(input: PageBase & { readonly errors: FormErrors }): SafeHtml {
  const errors = input.errors;
  const error = errors.file;
  return consoleLayout(
    { title: 'Import members from a CSV file', user: input.user, csrfToken: input.csrfToken, current, hasErrors: hasErrors(errors) },
    html`${errorSummary(errors)}<h1>Import members from a CSV file</h1>
<p>The first row names the columns: <code>first_name</code> and <code>last_name</code>, and any of <code>email</code>, <code>phone</code>, <code>job_title</code>, <code>department</code>, <code>external_id</code>. Up to 200,000 rows.</p>
<p>A row whose email address (or else external id) is already a member’s updates that member; any other row adds one. A bad row is reported and the rest go on.</p>
<form method="post" action="${current}/import" enctype="multipart/form-data">
${hiddenField('csrf', input.csrfToken)}
<div class="field${error !== undefined ? ' field--error' : ''}">
<label for="field-file">CSV file</label>
${error !== undefined && html`<p class="field-error" id="field-file-error"><span class="visually-hidden">Error:</span> ${error}</p>`}
<input id="field-file" name="file" type="file" accept=".csv,text/csv"${error !== undefined && html` aria-describedby="field-file-error" aria-invalid="true"`}>
</div>
<div class="actions">${button('Import members')} <a class="button button--secondary" href="${current}">Cancel</a></div>
</form>`,
  );
}

export function importProgressPage(input: PageBase & { readonly job: ImportJob }): SafeHtml {
  const { job } = input;
  const c = job.counts;
  const running = job.state === 'running';
  const path = `${current}/import/${job.id}`;
  return consoleLayout(
    { title: running ? 'Importing members' : 'Import finished', user: input.user, csrfToken: input.csrfToken, current },
    html`<div id="import-progress"${running && html` data-live-every="2"`}>
<h1>${running ? 'Importing members' : job.state === 'done' ? 'Import finished' : 'Import stopped'}</h1>
<p>${job.fileName}, started ${utcDateTime(job.startedAt)}.${running && ' This page updates itself every 2 seconds.'}</p>
${job.failure !== null && html`<p class="warning-text"><strong>${job.failure}</strong></p>`}
<ul class="stats" aria-label="Rows so far">
<li><strong>${c.rows}</strong> rows read</li>
<li><strong>${c.added}</strong> added</li>
<li><strong>${c.updated}</strong> updated</li>
<li><strong>${c.unchanged}</strong> unchanged</li>
<li><strong>${c.failed}</strong> rejected</li>
</ul>
${job.rejected.length > 0 &&
  html`${dataTable({
    id: 'rejected',
    caption: c.failed > job.rejected.length ? `Rejected rows (the first ${MAX_REPORTED} of ${c.failed})` : 'Rejected rows',
    head: ['Row', 'Why'],
    rows: job.rejected.map((r) => [String(r.row), r.message]),
    empty: '',
  })}`}
</div>
<div class="actions">
${running && html`<a class="button button--secondary" href="${path}">Refresh</a>`}
<a class="button button--secondary" href="${current}">Back to members</a>
</div>`,
  );
}
