// A table that stays a table on a phone: in a container that scrolls sideways on its own and can
// take keyboard focus (so a keyboard user can scroll it too), named by its caption.
import { html, type SafeHtml, type HtmlValue } from '../../shared/sign-in/html.js';

export function dataTable(input: { readonly id: string; readonly caption: string; readonly head: readonly string[]; readonly rows: readonly (readonly HtmlValue[])[]; readonly empty: string }): SafeHtml {
  if (input.rows.length === 0) return html`<p id="${input.id}" class="notice">${input.empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-labelledby="${input.id}-caption" tabindex="0">
<table id="${input.id}">
<caption id="${input.id}-caption">${input.caption}</caption>
<thead><tr>${input.head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>
${input.rows.map((row) => html`<tr>${row.map((cell, i) => (i === 0 ? html`<th scope="row">${cell}</th>` : html`<td>${cell}</td>`))}</tr>\n`)}</tbody>
</table>
</div>`;
}

/** A date and time for a table, in UTC (the console says so once per page). */
export function utcDateTime(value: Date | string | null): string {
  if (value === null) return '—';
  const date = value instanceof Date ? value : new Date(value);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
