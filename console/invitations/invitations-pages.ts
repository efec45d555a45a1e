// /invitations: the signed-in user's pending invitations with Accept and Decline; and the pages
// of an invitation's emailed link (set a password or a passkey first, or sign in).
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { Role } from '../../shared/domain/events.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../shared/crypto/password-hash.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { button, errorSummary, hasErrors, postForm, textInput, type FormErrors } from '../pages/form-fields.js';
import { ROLE_NAMES } from '../settings/people-pages.js';
import { SIGN_IN_PATHS } from '../../command-service/sign-in/sign-in-paths.js';

export interface MyInvitation {
  readonly invite_id: number;
  readonly org_id: number;
  readonly organization: string;
  readonly role: Role | null;
  readonly created_at: Date;
}

const NOTICES: Readonly<Record<string, string>> = {
  accepted: 'Invitation accepted.',
  declined: 'Invitation declined.',
  joined: 'Your account is ready.',
};

function roleText(role: Role | null): string {
  return role === null ? 'Member' : `${ROLE_NAMES[role].label} (${role})`;
}

export function invitationsPage(input: { user: ConsoleUser; csrfToken: string; invitations: readonly MyInvitation[]; notice: string | null }): SafeHtml {
  const notice = input.notice !== null ? NOTICES[input.notice] : undefined;
  return consoleLayout(
    { title: 'Your invitations', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.invitations },
    html`<h1>Your invitations</h1>
${notice !== undefined && html`<div class="panel" role="status"><p>${notice}</p></div>`}
${
  input.invitations.length === 0
    ? html`<p class="notice">You have no pending invitations.</p>`
    : html`<ul class="invitation-list">${input.invitations.map(
        (i) => html`<li class="invitation">
<h2>${i.organization}</h2>
<p>Role offered: <strong>${roleText(i.role)}</strong>. Sent ${i.created_at.toISOString().slice(0, 10)}.</p>
${
  i.org_id === input.user.orgId
    ? html`<div class="actions">${postForm(`${CONSOLE_PATHS.invitations}/${i.invite_id}/accept`, input.csrfToken, button('Accept'))}${postForm(
        `${CONSOLE_PATHS.invitations}/${i.invite_id}/decline`,
        input.csrfToken,
        button('Decline', { variant: 'secondary' }),
      )}</div>`
    : html`<p>This invitation is for another organization: open the link in its email to join it.</p>${postForm(
        `${CONSOLE_PATHS.invitations}/${i.invite_id}/decline`,
        input.csrfToken,
        button('Decline', { variant: 'secondary' }),
      )}`
}
</li>`,
      )}</ul>`
}`,
  );
}

export interface JoinForm {
  readonly firstName: string;
  readonly lastName: string;
}

/** The names a person joining must give, whichever way they will sign in. */
export function joinNameErrors(form: JoinForm): Record<string, string> {
  const missing: Record<string, string> = {};
  if (form.firstName.trim() === '') missing.first_name = 'Enter your first name';
  if (form.lastName.trim() === '') missing.last_name = 'Enter your last name';
  return missing;
}

/**
 * Set up an account: names, then a password; or, where the browser can make one, a passkey
 * instead (the section stays hidden until /signin/passkey.js finds WebAuthn, so without a script
 * the page is the password form alone).
 */
export function setPasswordPage(input: { csrfToken: string; action: string; email: string; organization: string; form: JoinForm; errors: FormErrors }): SafeHtml {
  const { form, errors } = input;
  return consoleLayout(
    { title: `Join ${input.organization}`, user: null, csrfToken: input.csrfToken, hasErrors: hasErrors(errors), scripts: [SIGN_IN_PATHS.passkeyScript] },
    html`${errorSummary(errors)}
<h1>Join ${input.organization}</h1>
<p>You are invited as <strong>${input.email}</strong>. Set up your account first; then you can accept or decline the invitation.</p>
${postForm(
  input.action,
  input.csrfToken,
  html`<input type="email" name="username" value="${input.email}" autocomplete="username" hidden readonly>
${textInput({ name: 'first_name', label: 'First name', value: form.firstName, errors, autocomplete: 'given-name', maxlength: 100 })}
${textInput({ name: 'last_name', label: 'Last name', value: form.lastName, errors, autocomplete: 'family-name', maxlength: 100 })}
<section id="join-passkey" aria-labelledby="join-passkey-heading" hidden>
<h2 id="join-passkey-heading">Sign in with a passkey</h2>
<p>Use this device’s fingerprint, face or screen lock, or a security key, instead of a password.</p>
<div class="passkey-join">
<button type="button" id="passkey-join" class="button button--primary">Create account with a passkey</button>
<p class="passkey-status" role="status"></p>
</div>
<h2>Or choose a password</h2>
</section>
${textInput({ name: 'password', label: 'Password', hint: `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`, value: '', errors, type: 'password', autocomplete: 'new-password', maxlength: MAX_PASSWORD_LENGTH })}
<p>${button('Create account')}</p>`,
  { novalidate: true },
)}`,
  );
}

export function signInToAnswerPage(input: { csrfToken: string; email: string; organization: string }): SafeHtml {
  return consoleLayout(
    { title: `Invitation to ${input.organization}`, user: null, csrfToken: input.csrfToken },
    html`<h1>Invitation to ${input.organization}</h1>
<p>You already have an account as <strong>${input.email}</strong>. Sign in to accept or decline.</p>
<p><a class="button button--primary" href="${SIGN_IN_PATHS.signIn}">Sign in</a></p>`,
  );
}
