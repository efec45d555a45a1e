// /settings/people: who can sign in and their roles, invite allowances with this month's use, the
// invite form and the pending invitations; and the page that changes one person's access.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import { ROLES, type Role } from '../../shared/domain/events.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable, utcDateTime } from '../pages/data-table.js';
import { button, choices, errorSummary, hasErrors, postForm, selectField, textInput, type FormErrors } from '../pages/form-fields.js';

export const ROLE_NAMES: Readonly<Record<Role, { readonly label: string; readonly hint: string }>> = {
  admin: { label: 'Admin', hint: "Manages the organization's settings: clients, keys, facilities and people." },
  self_invite: { label: 'Host', hint: 'Invites guests (creates passes), within the monthly allowance.' },
  employee_view: { label: 'Directory', hint: 'Reads the member directory through apps.' },
};

export interface PersonItem {
  readonly user_id: number;
  readonly name: string;
  readonly email: string;
  readonly roles: readonly Role[];
  /** The user's own allowance, or null for the organization's. */
  readonly invite_allowance: number | null;
  readonly used: number;
}

export interface PendingInvitation {
  readonly invite_id: number;
  readonly email: string;
  readonly role: Role | null;
  readonly created_at: Date;
}

export interface InviteForm {
  readonly email: string;
  readonly role: string;
}

const NOTICES: Readonly<Record<string, string>> = {
  invited: 'Invitation sent.',
  cancelled: 'Invitation cancelled.',
  saved: 'Access saved.',
  allowance: 'Organization default saved.',
};

function rolesText(roles: readonly Role[]): string {
  return roles.length === 0 ? 'None' : roles.map((r) => ROLE_NAMES[r].label).join(', ');
}

export function peoplePage(input: {
  user: ConsoleUser;
  csrfToken: string;
  people: readonly PersonItem[];
  invitations: readonly PendingInvitation[];
  orgAllowance: number;
  notice: string | null;
  invite: InviteForm;
  allowanceValue: string;
  errors: FormErrors;
}): SafeHtml {
  const { errors } = input;
  const notice = input.notice !== null ? NOTICES[input.notice] : undefined;
  return consoleLayout(
    { title: 'People', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.people, hasErrors: hasErrors(errors) },
    html`${errorSummary(errors)}
<h1>People</h1>
${notice !== undefined && html`<div class="panel" role="status"><p>${notice}</p></div>`}
<section aria-labelledby="invite-heading">
<h2 id="invite-heading">Invite someone</h2>
<p>They get an email with a link to accept. Someone without an account sets a password first.</p>
${postForm(
  `${CONSOLE_PATHS.people}/invite`,
  input.csrfToken,
  html`${textInput({ name: 'email', label: 'Email address', value: input.invite.email, errors, type: 'email', autocomplete: 'off', maxlength: 254 })}
${selectField({
  name: 'role',
  label: 'Role offered',
  errors,
  selected: input.invite.role,
  options: [{ value: '', label: 'No role (membership only)' }, ...ROLES.map((r) => ({ value: r, label: `${ROLE_NAMES[r].label} (${r})` }))],
})}
<p>${button('Send invitation')}</p>`,
  { novalidate: true },
)}
</section>
<section aria-labelledby="pending-heading">
<h2 id="pending-heading">Pending invitations</h2>
${dataTable({
  id: 'invitations',
  caption: 'Invitations not yet answered (times in UTC)',
  head: ['Email', 'Role offered', 'Sent', 'Actions'],
  empty: 'No pending invitations.',
  rows: input.invitations.map((i) => [
    i.email,
    i.role === null ? 'None' : ROLE_NAMES[i.role].label,
    utcDateTime(i.created_at),
    html`<a class="button button--secondary" href="${CONSOLE_PATHS.people}/invitations/${i.invite_id}/cancel">Cancel<span class="visually-hidden"> the invitation of ${i.email}</span></a>`,
  ]),
})}
</section>
<section aria-labelledby="people-heading">
<h2 id="people-heading">Who can sign in</h2>
${dataTable({
  id: 'people',
  caption: "People and this month's guest invites",
  head: ['Name', 'Email', 'Roles', 'Monthly invites', 'Used this month', 'Actions'],
  empty: 'Nobody yet.',
  rows: input.people.map((p) => [
    p.name,
    p.email,
    rolesText(p.roles),
    p.invite_allowance === null ? `${input.orgAllowance} (organization default)` : String(p.invite_allowance),
    `${p.used} of ${p.invite_allowance ?? input.orgAllowance}`,
    html`<a class="button button--secondary" href="${CONSOLE_PATHS.people}/${p.user_id}">Change<span class="visually-hidden"> access of ${p.name}</span></a>`,
  ]),
})}
</section>
<section aria-labelledby="allowance-heading">
<h2 id="allowance-heading">Organization default</h2>
${postForm(
  `${CONSOLE_PATHS.people}/allowance`,
  input.csrfToken,
  html`${textInput({ name: 'invite_allowance', label: 'Guest invites a month, per person', hint: 'For everyone without an allowance of their own.', value: input.allowanceValue, errors, type: 'number', width: 'short' })}
<p>${button('Save default', { variant: 'secondary' })}</p>`,
  { novalidate: true },
)}
</section>`,
  );
}

export interface AccessForm {
  readonly roles: readonly string[];
  /** '' for the organization's default. */
  readonly allowance: string;
}

export function personPage(input: { user: ConsoleUser; csrfToken: string; person: PersonItem; orgAllowance: number; form: AccessForm; errors: FormErrors }): SafeHtml {
  const { person, form, errors } = input;
  return consoleLayout(
    { title: `Access of ${person.name}`, user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.people, hasErrors: hasErrors(errors) },
    html`<p><a href="${CONSOLE_PATHS.people}">Back to people</a></p>
${errorSummary(errors)}
<h1>Access of ${person.name}</h1>
<p>${person.email}. ${person.used} guest invites used this month.</p>
${postForm(
  `${CONSOLE_PATHS.people}/${person.user_id}`,
  input.csrfToken,
  html`${choices({
  kind: 'checkbox',
  name: 'roles',
  label: 'Roles',
  hint: 'Giving someone the admin role needs a sign-in within the last 10 minutes.',
  errors,
  checked: form.roles,
  options: ROLES.map((r) => ({ value: r, label: `${ROLE_NAMES[r].label} (${r})`, hint: ROLE_NAMES[r].hint })),
})}
${textInput({ name: 'invite_allowance', label: 'Guest invites a month (optional)', hint: `Leave empty for the organization's default (${input.orgAllowance}).`, value: form.allowance, errors, type: 'number', width: 'short' })}
<p>${button('Save access')}</p>`,
  { novalidate: true },
)}`,
  );
}
