// The frame of every console page: a skip link, the service name and who is signed in (with Sign
// out), the navigation the user's roles allow (the current page marked for screen readers), then
// the page. One same-origin stylesheet and one small same-origin script (the policy allows no
// inline style or script; every page works without the script). A page with form errors has its
// title prefixed with "Error:" (GOV.UK), so a screen reader says so first.
import { html, type SafeHtml } from '../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../../command-service/sign-in/sign-in-paths.js';
import { SERVICE_NAME, csrfField } from '../../command-service/sign-in/pages/layout.js';
import type { ConsoleUser } from '../console-user.js';
import { navFor } from '../console-nav.js';
import { CONSOLE_PATHS } from '../console-paths.js';

export interface ConsolePageOptions {
  readonly title: string;
  /** Null on pages shown before the user is known (a 403 or 404 of the guard itself). */
  readonly user: ConsoleUser | null;
  readonly csrfToken: string;
  /** The nav entry to mark as the current page (its href). */
  readonly current?: string;
  /** The page shows form errors: its title starts with "Error:". */
  readonly hasErrors?: boolean;
  /** More same-origin scripts (deferred); they read the CSRF token from `<meta name="csrf-token">`. */
  readonly scripts?: readonly string[];
}

export function consoleLayout(options: ConsolePageOptions, main: SafeHtml): SafeHtml {
  const { user, csrfToken, current } = options;
  const title = `${options.hasErrors ? 'Error: ' : ''}${options.title}`;
  const nav =
    user === null
      ? html``
      : html`<nav aria-label="Console">
<ul class="nav">${navFor(user.roles).map(
          (item) => html`<li><a href="${item.href}"${item.href === current ? html` aria-current="page"` : html``}>${item.text}</a></li>`,
        )}</ul>
</nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${SERVICE_NAME}</title>
<link rel="stylesheet" href="${CONSOLE_PATHS.stylesheet}">
<script src="${CONSOLE_PATHS.script}" defer></script>
${(options.scripts ?? []).length > 0 && html`<meta name="csrf-token" content="${csrfToken}">
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>
`)}`}</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="masthead">
<p class="service"><a href="${user === null ? SIGN_IN_PATHS.home : CONSOLE_PATHS.invitations}">${SERVICE_NAME}</a></p>
${
  user !== null &&
  html`<form class="who" method="post" action="${SIGN_IN_PATHS.signOut}">
${csrfField(csrfToken)}<span>${user.email}</span> <button type="submit" class="link-button">Sign out</button>
</form>`
}
</header>
${nav}
<main id="main" tabindex="-1">
${main}
</main>
</body>
</html>
`;
}
