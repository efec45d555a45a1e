// The audit page (/settings/audit): the organization's events, newest first, with who did it (a
// user by name and email, an API key and the admin it acts for, the operator, or the service
// itself), what happened and to what, filtered by kind.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable, utcDateTime } from '../pages/data-table.js';
import { NO_ERRORS, selectField } from '../pages/form-fields.js';

export interface AuditEntry {
  readonly when: string;
  readonly who: string;
  readonly what: string;
  readonly onWhat: string;
}

export const KIND_LABELS: Readonly<Record<string, string>> = {
  passes: 'Passes',
  visits: 'Check-ins and check-outs',
  delivery: 'Guest messages',
  members: 'Members',
  facilities: 'Facilities',
  people: 'People and roles',
  api_keys: 'API keys',
  clients: 'OAuth clients',
  organization: 'Organization',
};

/** `PassCreated` -> `Pass created`. */
export function eventWords(type: string): string {
  const words = type.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/O Auth/g, 'OAuth').replace(/Api/g, 'API');
  return words.charAt(0) + words.slice(1).toLowerCase().replace(/\bapi\b/g, 'API').replace(/\boauth\b/g, 'OAuth');
}

export function auditPage(input: { readonly user: ConsoleUser; readonly csrfToken: string; readonly kind: string; readonly entries: readonly AuditEntry[]; readonly nextHref: string | null }): SafeHtml {
  return consoleLayout(
    { title: 'Audit log', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.audit },
    html`<h1>Audit log</h1>
<p>What was done in your organization, newest first. Personal data of an erased member is not shown.</p>
<form method="get" action="${CONSOLE_PATHS.audit}" class="inline-form">
${selectField({ name: 'kind', label: 'Kind of event', errors: NO_ERRORS, options: [{ value: '', label: 'All kinds' }, ...Object.entries(KIND_LABELS).map(([value, label]) => ({ value, label }))], selected: input.kind })}
<div class="field"><button type="submit" class="button button--secondary">Show</button></div>
</form>
${dataTable({ id: 'audit', caption: 'Events (times in UTC)', head: ['When', 'Who', 'What', 'On what'], rows: input.entries.map((e) => [e.when, e.who, e.what, e.onWhat]), empty: 'No events of this kind yet.' })}
${input.nextHref !== null && html`<p><a href="${input.nextHref}">Older events</a></p>`}`,
  );
}

export { utcDateTime };
