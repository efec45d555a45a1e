// A page that only says what went wrong and where to go next (no sign-in in progress, and so on).
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { layout } from './layout.js';

export function messagePage(input: { readonly title: string; readonly message: string; readonly link: { readonly href: string; readonly text: string } }): SafeHtml {
  return layout(
    { title: input.title },
    html`<h1>${input.title}</h1>
<p role="alert">${input.message}</p>
<p><a href="${input.link.href}">${input.link.text}</a></p>`,
  );
}
