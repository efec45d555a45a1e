// The console's form parts, GOV.UK style: a visible label above each field, a hint under the
// label, the error message above the input it belongs to (tied to it by aria-describedby, the
// input marked aria-invalid and keeping what was typed), and on a failed submit an error summary
// at the top of the page linking to each field in error (focused on load). Field ids are
// `field-{name}`, so a summary link and a test can find a field from its name alone.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import { csrfField } from '../../command-service/sign-in/pages/layout.js';

export { csrfField };

/** Errors of a submitted form by field name, in the order the fields appear. */
export type FormErrors = Readonly<Record<string, string>>;

export const NO_ERRORS: FormErrors = {};

/** The key of an error about the whole form (a limit reached), not one field: its summary link goes to the page. */
export const FORM_ERROR = 'form';

export function hasErrors(errors: FormErrors): boolean {
  return Object.keys(errors).length > 0;
}

export function fieldId(name: string): string {
  return `field-${name}`;
}

function errorId(name: string): string {
  return `field-${name}-error`;
}

function hintId(name: string): string {
  return `field-${name}-hint`;
}

export function errorSummary(errors: FormErrors): SafeHtml {
  const entries = Object.entries(errors);
  if (entries.length === 0) return html``;
  // autofocus takes keyboard and screen-reader focus to the summary without a script.
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" autofocus>
<h2 id="error-summary-title">There is a problem</h2>
<ul>${entries.map(([name, message]) => html`<li><a href="${name === FORM_ERROR ? '#main' : `#${fieldId(name)}`}">${message}</a></li>`)}</ul>
</div>`;
}

interface FieldParts {
  readonly name: string;
  readonly label: string;
  readonly hint?: string;
  readonly errors: FormErrors;
}

function describedBy(name: string, hint: string | undefined, error: string | undefined): SafeHtml {
  const ids = [hint !== undefined ? hintId(name) : null, error !== undefined ? errorId(name) : null].filter((id): id is string => id !== null);
  return html`${ids.length > 0 && html` aria-describedby="${ids.join(' ')}"`}${error !== undefined && html` aria-invalid="true"`}`;
}

function hintAndError(name: string, hint: string | undefined, error: string | undefined): SafeHtml {
  return html`${hint !== undefined && html`<p class="hint" id="${hintId(name)}">${hint}</p>`}${
    error !== undefined && html`<p class="field-error" id="${errorId(name)}"><span class="visually-hidden">Error:</span> ${error}</p>`
  }`;
}

export function textInput(
  parts: FieldParts & {
    readonly value: string;
    readonly type?: 'text' | 'email' | 'password' | 'date' | 'datetime-local' | 'number' | 'url';
    readonly autocomplete?: string;
    readonly required?: boolean;
    readonly maxlength?: number;
    readonly width?: 'short' | 'full';
  },
): SafeHtml {
  const { name, label, hint, errors, value } = parts;
  const error = errors[name];
  return html`<div class="field${error !== undefined ? ' field--error' : ''}">
<label for="${fieldId(name)}">${label}</label>
${hintAndError(name, hint, error)}
<input id="${fieldId(name)}" name="${name}" type="${parts.type ?? 'text'}" value="${value}" class="${parts.width === 'short' ? 'input-short' : 'input'}"${
    parts.autocomplete !== undefined && html` autocomplete="${parts.autocomplete}"`
  }${parts.required === true && html` required`}${parts.maxlength !== undefined && html` maxlength="${parts.maxlength}"`}${describedBy(name, hint, error)}>
</div>`;
}

export function textArea(parts: FieldParts & { readonly value: string; readonly rows?: number }): SafeHtml {
  const { name, label, hint, errors, value } = parts;
  const error = errors[name];
  return html`<div class="field${error !== undefined ? ' field--error' : ''}">
<label for="${fieldId(name)}">${label}</label>
${hintAndError(name, hint, error)}
<textarea id="${fieldId(name)}" name="${name}" rows="${parts.rows ?? 3}" class="input"${describedBy(name, hint, error)}>${value}</textarea>
</div>`;
}

export interface Choice {
  readonly value: string;
  readonly label: string;
  readonly hint?: string;
}

/**
 * Checkboxes (several) or radios (one) in a fieldset whose legend is the question. The first
 * choice carries the field id, so the error summary's link lands on it.
 */
export function choices(parts: FieldParts & { readonly kind: 'checkbox' | 'radio'; readonly options: readonly Choice[]; readonly checked: readonly string[] }): SafeHtml {
  const { name, label, hint, errors, options, checked, kind } = parts;
  const error = errors[name];
  return html`<div class="field${error !== undefined ? ' field--error' : ''}">
<fieldset${describedBy(name, hint, error)}>
<legend>${label}</legend>
${hintAndError(name, hint, error)}
<div class="choices">${options.map((option, i) => {
    const id = i === 0 ? fieldId(name) : `${fieldId(name)}-${i + 1}`;
    const optionHint = option.hint !== undefined ? `${id}-hint` : null;
    return html`<div class="choice">
<input id="${id}" name="${name}" type="${kind}" value="${option.value}"${checked.includes(option.value) && html` checked`}${optionHint !== null && html` aria-describedby="${optionHint}"`}>
<label for="${id}">${option.label}</label>${optionHint !== null && html`
<p class="hint" id="${optionHint}">${option.hint}</p>`}
</div>`;
  })}</div>
</fieldset>
</div>`;
}

export function selectField(parts: FieldParts & { readonly options: readonly Choice[]; readonly selected: string }): SafeHtml {
  const { name, label, hint, errors, options, selected } = parts;
  const error = errors[name];
  return html`<div class="field${error !== undefined ? ' field--error' : ''}">
<label for="${fieldId(name)}">${label}</label>
${hintAndError(name, hint, error)}
<select id="${fieldId(name)}" name="${name}" class="input"${describedBy(name, hint, error)}>
${options.map((o) => html`<option value="${o.value}"${o.value === selected && html` selected`}>${o.label}</option>\n`)}</select>
</div>`;
}

/** A form posting to `action`, with the CSRF field. */
export function postForm(action: string, csrfToken: string, body: SafeHtml, options: { readonly className?: string; readonly novalidate?: boolean } = {}): SafeHtml {
  return html`<form method="post" action="${action}"${options.className !== undefined && html` class="${options.className}"`}${options.novalidate === true && html` novalidate`}>
${csrfField(csrfToken)}
${body}
</form>`;
}

export function button(text: string, options: { readonly variant?: 'primary' | 'secondary' | 'warning'; readonly name?: string; readonly value?: string } = {}): SafeHtml {
  return html`<button type="submit" class="button button--${options.variant ?? 'primary'}"${options.name !== undefined && html` name="${options.name}" value="${options.value ?? ''}"`}>${text}</button>`;
}

/** A list's main action: a link styled as a button. */
export function buttonLink(href: string, text: string): SafeHtml {
  return html`<a class="button button--primary" href="${href}">${text}</a>`;
}

export function hiddenField(name: string, value: string | number): SafeHtml {
  return html`<input type="hidden" name="${name}" value="${value}">`;
}
