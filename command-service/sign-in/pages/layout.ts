// The frame of every sign-in page: language, viewport, title, our stylesheet, our scripts (files
// from this origin only: the content security policy allows no inline script), and the CSRF token
// in a meta element for those scripts.
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';

export const SERVICE_NAME = 'Guest Pass';

/** The message of a sign-in form refused for too many failed attempts (a 429 with Retry-After). */
export const TOO_MANY_ATTEMPTS = 'Too many attempts. Wait a few minutes, then try again.';

export interface LayoutOptions {
  readonly title: string;
  /** Exposed to scripts as `<meta name="csrf-token">`. */
  readonly csrfToken?: string;
  /** Same-origin script paths, loaded with `defer`. */
  readonly scripts?: readonly string[];
}

export function layout(options: LayoutOptions, main: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${options.csrfToken !== undefined && html`<meta name="csrf-token" content="${options.csrfToken}">\n`}<title>${options.title} · ${SERVICE_NAME}</title>
<link rel="stylesheet" href="${SIGN_IN_PATHS.stylesheet}">
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>\n`)}</head>
<body>
<header><p class="service">${SERVICE_NAME}</p></header>
<main>
${main}
</main>
</body>
</html>
`;
}

/** The hidden CSRF field of a form. */
export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

/**
 * A form error tied to its field: the message has an id the field names in aria-describedby
 * (with aria-invalid), and role="alert" so a screen reader announces it when the page loads.
 */
export function fieldError(id: string, message: string | null): SafeHtml {
  return message === null ? html`` : html`<p id="${id}" class="error" role="alert">${message}</p>`;
}

/** The aria attributes of a field that may have an error. */
export function describedBy(errorId: string, message: string | null, hintId?: string): SafeHtml {
  const ids = [hintId, message !== null ? errorId : undefined].filter((id): id is string => id !== undefined);
  return html`${ids.length > 0 && html` aria-describedby="${ids.join(' ')}"`}${message !== null && html` aria-invalid="true"`}`;
}
