// /settings/clients: the organization's OAuth clients, the registration form, and what a
// registration or a rotation shows once.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { OAuthClientRow } from '../../shared/db/read-models.js';
import { MAX_CLIENTS_PER_ORGANIZATION } from '../../shared/oauth/client-decider.js';
import { OAUTH_SCOPES, SCOPE_DESCRIPTIONS, isOAuthScope } from '../../shared/oauth/scopes.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable, utcDateTime } from '../pages/data-table.js';
import { button, buttonLink, choices, errorSummary, hasErrors, postForm, textArea, textInput, type FormErrors } from '../pages/form-fields.js';

export type ClientListItem = Pick<OAuthClientRow, 'client_id' | 'name' | 'client_type' | 'redirect_uris' | 'post_logout_redirect_uris' | 'allowed_scopes' | 'created_at'>;

/** A scope by its name, with what it grants beside it. */
export function scopeList(scopes: readonly string[], describe: (scope: string) => string | undefined): SafeHtml {
  return html`<ul class="scope-list">${scopes.map((s) => {
    const description = describe(s);
    return html`<li><code>${s}</code>${description !== undefined && html` — ${description}`}</li>`;
  })}</ul>`;
}

const oauthScopeDescription = (scope: string) => (isOAuthScope(scope) ? SCOPE_DESCRIPTIONS[scope] : undefined);

const NOTICES: Readonly<Record<string, string>> = {
  registered: 'Client registered.',
  deleted: 'Client deleted. It can no longer sign anyone in.',
};

export function clientsPage(input: { user: ConsoleUser; csrfToken: string; clients: readonly ClientListItem[]; notice: string | null }): SafeHtml {
  const { clients } = input;
  const full = clients.length >= MAX_CLIENTS_PER_ORGANIZATION;
  const notice = input.notice !== null ? NOTICES[input.notice] : undefined;
  return consoleLayout(
    { title: 'OAuth clients', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.clients },
    html`<h1>OAuth clients</h1>
${notice !== undefined && html`<div class="panel" role="status"><p>${notice}</p></div>`}
<p>Apps that sign your people in with their Guest Pass account (OpenID Connect, authorization code with PKCE).</p>
${
  full
    ? html`<p class="notice" id="client-limit">Your organization has ${clients.length} clients, the most it can have (${MAX_CLIENTS_PER_ORGANIZATION}). Delete one you no longer use to register another.</p>`
    : html`<p>${buttonLink(`${CONSOLE_PATHS.clients}/new`, 'Register client')}</p>`
}
${dataTable({
  id: 'clients',
  caption: `${clients.length} of at most ${MAX_CLIENTS_PER_ORGANIZATION} clients`,
  head: ['Name', 'Type', 'Client ID', 'Redirect URIs', 'Scopes', 'Registered', 'Actions'],
  empty: 'No clients yet.',
  rows: clients.map((c) => [
    c.name,
    c.client_type === 'public' ? 'Public' : 'Confidential',
    html`<code>${c.client_id}</code>`,
    html`<ul class="scope-list">${c.redirect_uris.map((u) => html`<li><code>${u}</code></li>`)}</ul>${
      c.post_logout_redirect_uris.length > 0 &&
      html`<p class="hint">After sign-out:</p><ul class="scope-list">${c.post_logout_redirect_uris.map((u) => html`<li><code>${u}</code></li>`)}</ul>`
    }`,
    scopeList(c.allowed_scopes, oauthScopeDescription),
    utcDateTime(c.created_at),
    html`${c.client_type === 'confidential' && html`<a class="button button--secondary" href="${CONSOLE_PATHS.clients}/${c.client_id}/rotate">Rotate secret<span class="visually-hidden"> of ${c.name}</span></a>`}<a class="button button--secondary" href="${CONSOLE_PATHS.clients}/${c.client_id}/delete">Delete<span class="visually-hidden"> ${c.name}</span></a>`,
  ]),
})}`,
  );
}

export interface ClientForm {
  readonly name: string;
  readonly clientType: string;
  readonly redirectUris: string;
  readonly postLogoutRedirectUris: string;
  readonly scopes: readonly string[];
}

export const EMPTY_CLIENT_FORM: ClientForm = { name: '', clientType: 'public', redirectUris: '', postLogoutRedirectUris: '', scopes: ['openid', 'profile', 'email'] };

export function newClientPage(input: { user: ConsoleUser; csrfToken: string; form: ClientForm; errors: FormErrors }): SafeHtml {
  const { form, errors } = input;
  return consoleLayout(
    { title: 'Register a client', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.clients, hasErrors: hasErrors(errors) },
    html`<p><a href="${CONSOLE_PATHS.clients}">Back to clients</a></p>
${errorSummary(errors)}
<h1>Register a client</h1>
${postForm(
  `${CONSOLE_PATHS.clients}/new`,
  input.csrfToken,
  html`${textInput({ name: 'name', label: 'Name', hint: 'Shown to people on the consent page.', value: form.name, errors, maxlength: 100 })}
${choices({
  kind: 'radio',
  name: 'client_type',
  label: 'Type',
  errors,
  checked: [form.clientType],
  options: [
    { value: 'public', label: 'Public', hint: 'A browser or mobile app that cannot keep a secret: PKCE proves it.' },
    { value: 'confidential', label: 'Confidential', hint: 'A server that keeps a client secret. The secret is shown once.' },
  ],
})}
${textArea({ name: 'redirect_uris', label: 'Redirect URIs', hint: 'One per line: where people come back to after signing in (https, or http on 127.0.0.1 for apps on this computer).', value: form.redirectUris, errors, rows: 3 })}
${textArea({ name: 'post_logout_redirect_uris', label: 'Post-logout redirect URIs (optional)', hint: 'One per line: where people may be sent after signing out.', value: form.postLogoutRedirectUris, errors, rows: 2 })}
${choices({
  kind: 'checkbox',
  name: 'scopes',
  label: 'Scopes',
  hint: 'What the app may ask people for.',
  errors,
  checked: form.scopes,
  options: OAUTH_SCOPES.map((s) => ({ value: s, label: s, hint: SCOPE_DESCRIPTIONS[s] })),
})}
<p>${button('Register client')}</p>`,
  { novalidate: true },
)}`,
  );
}

export function registeredPublicClientPage(input: { user: ConsoleUser; csrfToken: string; clientId: string; name: string }): SafeHtml {
  return consoleLayout(
    { title: 'Client registered', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.clients },
    html`<h1>Client registered</h1>
<div class="panel" role="status"><p>${input.name} can now sign people in.</p></div>
<dl class="facts"><dt>Client ID</dt><dd><code id="client-id">${input.clientId}</code></dd><dt>Type</dt><dd>Public (no secret: PKCE)</dd></dl>
<p><a class="button button--primary" href="${CONSOLE_PATHS.clients}">Back to clients</a></p>`,
  );
}
