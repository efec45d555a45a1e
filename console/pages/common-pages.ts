// The console's shared pages: a message (403, 404, an error), check-then-confirm before anything
// is destroyed, a secret shown once on a page of its own, and "sign in again" before an action
// that needs a recent sign-in.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import type { ConsoleUser } from '../console-user.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleLayout } from './console-layout.js';
import { button, hiddenField, postForm } from './form-fields.js';

interface PageBase {
  readonly user: ConsoleUser | null;
  readonly csrfToken: string;
  readonly current?: string;
}

export function messagePage(input: PageBase & { readonly title: string; readonly message: string; readonly link?: { readonly href: string; readonly text: string } }): SafeHtml {
  return consoleLayout(
    { title: input.title, user: input.user, csrfToken: input.csrfToken, current: input.current },
    html`<h1>${input.title}</h1>
<p>${input.message}</p>
${input.link !== undefined && html`<p><a href="${input.link.href}">${input.link.text}</a></p>`}`,
  );
}

export function forbiddenPage(input: PageBase): SafeHtml {
  return messagePage({
    ...input,
    title: 'You do not have access to this page',
    message: 'Your account does not have the role this page needs. Ask an administrator of your organization if you need it.',
    link: { href: CONSOLE_PATHS.invitations, text: 'Go to your invitations' },
  });
}

export function notFoundPage(input: PageBase): SafeHtml {
  return messagePage({ ...input, title: 'Page not found', message: 'There is nothing here, or it belongs to another organization.' });
}

export interface ConfirmInput extends PageBase {
  readonly title: string;
  /** What will happen, in plain words ("It stops working at once."). */
  readonly consequence: string;
  readonly action: string;
  readonly buttonText: string;
  readonly hidden?: Readonly<Record<string, string | number>>;
  readonly backHref: string;
}

/** Check, then confirm: the destructive button posts `confirm=yes`; "Go back" is a plain link. */
export function confirmPage(input: ConfirmInput): SafeHtml {
  return consoleLayout(
    { title: input.title, user: input.user, csrfToken: input.csrfToken, current: input.current },
    html`<h1>${input.title}</h1>
<p class="warning-text"><strong>${input.consequence}</strong></p>
${postForm(
  input.action,
  input.csrfToken,
  html`${Object.entries(input.hidden ?? {}).map(([name, value]) => hiddenField(name, value))}${hiddenField('confirm', 'yes')}
<div class="actions">${button(input.buttonText, { variant: 'warning' })} <a class="button button--secondary" href="${input.backHref}">Go back</a></div>`,
)}`,
  );
}

export interface SecretInput extends PageBase {
  readonly title: string;
  /** What the secret is ("API key", "Client secret"). */
  readonly label: string;
  readonly secret: string;
  /** Other facts to show with it (the client id, the key's name). */
  readonly facts?: readonly { readonly term: string; readonly value: string }[];
  readonly next: { readonly href: string; readonly text: string };
}

/**
 * A secret shown once, on a page of its own that is never cached. The value sits in a read-only
 * field, so it can be selected and copied without a script; the script adds a Copy button.
 */
export function secretPage(input: SecretInput): SafeHtml {
  return consoleLayout(
    { title: input.title, user: input.user, csrfToken: input.csrfToken, current: input.current },
    html`<h1>${input.title}</h1>
<div class="panel" role="status">
<p><strong>Copy this ${input.label.toLowerCase()} now. You will not see it again.</strong> Only a hash of it is kept.</p>
</div>
${input.facts !== undefined && input.facts.length > 0 && html`<dl class="facts">${input.facts.map((f) => html`<dt>${f.term}</dt><dd><code>${f.value}</code></dd>`)}</dl>`}
<div class="field">
<label for="secret-value">${input.label}</label>
<input id="secret-value" class="input secret" type="text" readonly value="${input.secret}" autocomplete="off" spellcheck="false">
<button type="button" class="button button--secondary copy" data-copy="secret-value" hidden>Copy to clipboard</button>
</div>
<p><a class="button button--primary" href="${input.next.href}">${input.next.text}</a></p>`,
  );
}

/** An action needs a sign-in within the last 10 minutes: sign in again, then come back to `returnTo`. */
export function signInAgainPage(input: PageBase & { readonly what: string; readonly returnTo: string }): SafeHtml {
  return consoleLayout(
    { title: 'Sign in again to continue', user: input.user, csrfToken: input.csrfToken, current: input.current },
    html`<h1>Sign in again to continue</h1>
<p>To ${input.what}, you need to have signed in within the last 10 minutes.</p>
${postForm(CONSOLE_PATHS.reauthenticate, input.csrfToken, html`${hiddenField('return_to', input.returnTo)}
<p>${button('Sign in again')}</p>`)}`,
  );
}
