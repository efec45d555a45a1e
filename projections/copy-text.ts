// Rows in COPY's text format (one line per row, tab-separated, \N for NULL), the cheapest way to
// hand PostgreSQL many new rows: a rebuild's fresh table takes most of its rows this way.
import type { StoredRow } from './projection.js';

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Backslash, tab, newline and carriage return escaped as COPY reads them. */
function escapeText(value: string): string {
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (c) => ESCAPES[c]!) : value;
}

/**
 * An array in PostgreSQL's array input form (`{"a","b"}`), every element quoted so none is read as
 * NULL or split at a comma; it reads as an array of whatever element type the context asks for.
 */
export function arrayText(values: readonly unknown[]): string {
  return `{${values
    .map((v) => (v === null || v === undefined ? 'NULL' : `"${scalarText(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`))
    .join(',')}}`;
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayText(value);
  return JSON.stringify(value); // a json or jsonb column
}

/** One value as a field of a COPY text line. */
export function copyField(value: unknown): string {
  return value === null || value === undefined ? '\\N' : escapeText(scalarText(value));
}

/** The rows as COPY text with the columns in `columns`' order; a missing property is NULL. */
export function copyText(columns: readonly string[], rows: readonly StoredRow[]): string {
  let text = '';
  for (const row of rows) {
    let line = '';
    for (let i = 0; i < columns.length; i++) line += (i === 0 ? '' : '\t') + copyField(row[columns[i]!]);
    text += line + '\n';
  }
  return text;
}
