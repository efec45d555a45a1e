// The front desk's pages (/visitors): a facility's guests of the day in three lists (expected, on
// site, left) with arrival and door times, in a region the console script fetches again every 10
// seconds (a Refresh link does it without a script); and the "on site now" list for an
// evacuation, laid out for paper by the print stylesheet.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from '../pages/console-layout.js';
import { dataTable } from '../pages/data-table.js';
import { selectField, NO_ERRORS, type Choice } from '../pages/form-fields.js';

export const LIVE_SECONDS = 10;

export interface Visit {
  readonly name: string;
  readonly arrival: string;
  readonly checkedIn: string | null;
  readonly checkedOut: string | null;
}

export interface VisitorsView {
  readonly facilityId: number;
  readonly facilityName: string;
  readonly day: string;
  /** The facility's IANA time zone: the day and every time shown are on its clock. */
  readonly timeZone: string;
  readonly expected: readonly Visit[];
  readonly onSite: readonly Visit[];
  readonly left: readonly Visit[];
  readonly asOf: string;
}

interface PageBase {
  readonly user: ConsoleUser;
  readonly csrfToken: string;
}

function facilityPicker(facilities: readonly Choice[], selected: number, action: string): SafeHtml {
  return html`<form method="get" action="${action}" class="inline-form no-print">
${selectField({ name: 'facility', label: 'Facility', errors: NO_ERRORS, options: facilities, selected: String(selected) })}
<div class="field"><button type="submit" class="button button--secondary">Show</button></div>
</form>`;
}

export function visitorsPage(input: PageBase & { readonly facilities: readonly Choice[]; readonly view: VisitorsView | null }): SafeHtml {
  const v = input.view;
  const body =
    v === null
      ? html`<p class="notice">Your organization has no active facility.</p>`
      : html`${facilityPicker(input.facilities, v.facilityId, CONSOLE_PATHS.visitors)}
<div id="visitors-live" data-live-every="${LIVE_SECONDS}">
<h2>${v.facilityName}, ${v.day}</h2>
<ul class="stats" aria-label="Today at ${v.facilityName}">
<li><strong>${v.expected.length}</strong> expected</li>
<li><strong>${v.onSite.length}</strong> on site</li>
<li><strong>${v.left.length}</strong> left</li>
</ul>
<p class="hint">As of ${v.asOf} (${v.timeZone}, the facility’s time). This page updates itself every ${LIVE_SECONDS} seconds.</p>
${dataTable({ id: 'on-site', caption: 'On site (checked in, not out)', head: ['Guest', 'Arrival', 'Checked in'], rows: v.onSite.map((x) => [x.name, x.arrival, x.checkedIn ?? '—']), empty: 'No guest is on site.' })}
${dataTable({ id: 'expected', caption: 'Expected', head: ['Guest', 'Arrival'], rows: v.expected.map((x) => [x.name, x.arrival]), empty: 'No more guests are expected today.' })}
${dataTable({ id: 'left', caption: 'Left', head: ['Guest', 'Arrival', 'Checked in', 'Left'], rows: v.left.map((x) => [x.name, x.arrival, x.checkedIn ?? '—', x.checkedOut ?? '—']), empty: 'No guest has left yet.' })}
</div>
<div class="actions no-print">
<a class="button button--secondary" href="${CONSOLE_PATHS.visitors}?facility=${v.facilityId}">Refresh</a>
<a class="button button--secondary" href="${CONSOLE_PATHS.visitors}/on-site?facility=${v.facilityId}">Print the on-site list</a>
</div>`;
  return consoleLayout({ title: 'Visitors today', user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.visitors }, html`<h1>Visitors today</h1>\n${body}`);
}

export function onSitePage(input: PageBase & { readonly facilityId: number; readonly facilityName: string; readonly onSite: readonly Visit[]; readonly asOf: string }): SafeHtml {
  return consoleLayout(
    { title: `On site now: ${input.facilityName}`, user: input.user, csrfToken: input.csrfToken, current: CONSOLE_PATHS.visitors },
    html`<h1>On site now: ${input.facilityName}</h1>
<p>${input.onSite.length} guest${input.onSite.length === 1 ? '' : 's'} checked in and not out, as of ${input.asOf}.</p>
<p class="no-print">Print this page (your browser’s Print command) for an evacuation roll call.</p>
${dataTable({ id: 'evacuation', caption: 'Guests on site', head: ['Guest', 'Expected', 'Checked in', 'Accounted for'], rows: input.onSite.map((x) => [x.name, x.arrival, x.checkedIn ?? '—', '']), empty: 'No guest is on site.' })}
<div class="actions no-print">
<a class="button button--secondary" href="${CONSOLE_PATHS.visitors}/on-site?facility=${input.facilityId}">Refresh</a>
<a class="button button--secondary" href="${CONSOLE_PATHS.visitors}?facility=${input.facilityId}">Back to today’s visitors</a>
</div>`,
  );
}
