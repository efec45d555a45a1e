// /settings/api-keys: the organization's API keys (never their secret), the create form, and the
// key shown once.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import { ORG_SCOPES, type OrgScope } from '../../shared/domain/events.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable, utcDateTime } from '../pages/data-table.js';
import { button, buttonLink, choices, errorSummary, hasErrors, postForm, textArea, textInput, type FormErrors } from '../pages/form-fields.js';
import { scopeList } from './clients-pages.js';
import { MAX_API_KEY_NAME_LENGTH } from '../../shared/domain/api-key-decider.js';

/** What each organization API scope lets a key do. */
export const ORG_SCOPE_DESCRIPTIONS: Readonly<Record<OrgScope, string>> = {
  'org:passes:read': 'List and read guest passes',
  'org:passes:write': 'Create and revoke guest passes',
  'org:facilities:read': 'List facilities',
  'org:members:read': 'Read the member directory (names, job titles)',
  'org:members:contact:read': "Read members' email addresses and phone numbers",
  'org:audit:read': "Export the organization's own events with proofs from the audit log",
};

const describeOrgScope = (scope: string) => ORG_SCOPE_DESCRIPTIONS[scope as OrgScope];

export interface ApiKeyListItem {
  readonly key_id: string;
  /** Null for keys created before keys had names. */
  readonly name: string | null;
  readonly scopes: string[];
  readonly created_by: string | null;
  readonly created_at: Date;
  readonly expires_at: Date | null;
  readonly allowed_ips: string[];
  readonly revoked: boolean;
  /** Null: never used (or not since last-use times were kept). */
  readonly last_used_at: Date | null;
}

const NOTICES: Readonly<Record<string, string>> = { revoked: 'Key revoked. It stopped working at once.' };

function status(key: ApiKeyListItem, now: Date): SafeHtml {
  if (key.revoked) return html`<span class="tag tag--inactive">Revoked</span>`;
  if (key.expires_at !== null && key.expires_at.getTime() <= now.getTime()) return html`<span class="tag tag--inactive">Expired</span>`;
  return html`<span class="tag">Active</span>`;
}

export function apiKeysPage(input: { user: ConsoleUser; csrfToken: string; keys: readonly ApiKeyListItem[]; notice: string | null }): SafeHtml {
  const now = new Date();
  const notice = input.notice !== null ? NOTICES[input.notice] : undefined;
  return consoleLayout(
    { title: 'API keys', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.apiKeys },
    html`<h1>API keys</h1>
${notice !== undefined && html`<div class="panel" role="status"><p>${notice}</p></div>`}
<p>Keys let your own systems use the organization API (<code>/api/v1/org/…</code>). A key acts for the admin who created it. Last use is updated about once a minute.</p>
<p>${buttonLink(`${CONSOLE_PATHS.apiKeys}/new`, 'Create key')}</p>
${dataTable({
  id: 'api-keys',
  caption: 'Keys (times in UTC)',
  head: ['Name', 'Key ID', 'Status', 'Scopes', 'Created by', 'Created', 'Expires', 'IP allowlist', 'Last used', 'Actions'],
  empty: 'No keys yet.',
  rows: input.keys.map((k) => [
    k.name ?? html`<span class="hint">(unnamed)</span>`,
    html`<code>${k.key_id}</code>`,
    status(k, now),
    scopeList(k.scopes, describeOrgScope),
    k.created_by ?? '—',
    utcDateTime(k.created_at),
    k.expires_at === null ? 'Never' : utcDateTime(k.expires_at),
    k.allowed_ips.length === 0 ? 'Any address' : html`<ul class="scope-list">${k.allowed_ips.map((ip) => html`<li><code>${ip}</code></li>`)}</ul>`,
    // Written at most once a minute per key and process: up to about a minute behind.
    k.last_used_at === null ? 'Never' : utcDateTime(k.last_used_at),
    k.revoked ? '' : html`<a class="button button--secondary" href="${CONSOLE_PATHS.apiKeys}/${k.key_id}/revoke">Revoke<span class="visually-hidden"> key ${k.key_id}</span></a>`,
  ]),
})}`,
  );
}

export interface ApiKeyForm {
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expiresOn: string;
  readonly allowedIps: string;
}

export const EMPTY_API_KEY_FORM: ApiKeyForm = { name: '', scopes: [], expiresOn: '', allowedIps: '' };

export function newApiKeyPage(input: { user: ConsoleUser; csrfToken: string; form: ApiKeyForm; errors: FormErrors }): SafeHtml {
  const { form, errors } = input;
  return consoleLayout(
    { title: 'Create an API key', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.apiKeys, hasErrors: hasErrors(errors) },
    html`<p><a href="${CONSOLE_PATHS.apiKeys}">Back to API keys</a></p>
${errorSummary(errors)}
<h1>Create an API key</h1>
${postForm(
  `${CONSOLE_PATHS.apiKeys}/new`,
  input.csrfToken,
  html`${textInput({ name: 'name', label: 'Name', hint: 'What the key is for, such as "Reception kiosk". Up to 100 characters.', value: form.name, errors, required: true, maxlength: MAX_API_KEY_NAME_LENGTH })}
${choices({
  kind: 'checkbox',
  name: 'scopes',
  label: 'Scopes',
  hint: 'Give the key only what it needs.',
  errors,
  checked: form.scopes,
  options: ORG_SCOPES.map((s) => ({ value: s, label: s, hint: ORG_SCOPE_DESCRIPTIONS[s] })),
})}
${textInput({ name: 'expires_on', label: 'Expires on (optional)', hint: 'The key stops working at 00:00 UTC that day. Leave empty for a key that does not expire.', value: form.expiresOn, errors, type: 'date', width: 'short' })}
${textArea({ name: 'allowed_ips', label: 'IP allowlist (optional)', hint: 'One address or CIDR range per line, such as 203.0.113.0/24. Leave empty to allow any address.', value: form.allowedIps, errors, rows: 3 })}
<p>${button('Create key')}</p>`,
  { novalidate: true },
)}`,
  );
}
