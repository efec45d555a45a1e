// GET /: the service home page, where logout lands when no registered address was asked for.
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { SERVICE_NAME, layout } from './layout.js';

export function homePage(input: { readonly signedIn: boolean }): SafeHtml {
  return layout(
    { title: 'Home' },
    html`<h1>${SERVICE_NAME}</h1>
<p>Guest passes for your visitors, and sign-in for your organization's apps.</p>
<p>${input.signedIn ? html`<a href="${SIGN_IN_PATHS.account}">Your account</a>` : html`<a href="${SIGN_IN_PATHS.signIn}">Sign in</a>`}</p>`,
  );
}
