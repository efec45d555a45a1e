// GET /consent: what the client asks for, scope by scope, and Allow or Deny.
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SCOPE_DESCRIPTIONS, type OAuthScope } from '../../../shared/oauth/scopes.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { csrfField, layout } from './layout.js';

export interface ConsentPageInput {
  readonly csrfToken: string;
  readonly clientName: string;
  readonly scopes: readonly OAuthScope[];
  /** Who is signed in (the consent is theirs). */
  readonly userEmail: string | null;
  /** Names the request on screen (flowRequestId); posted back with the decision. */
  readonly requestId: string;
}

export function consentPage(input: ConsentPageInput): SafeHtml {
  const { csrfToken, clientName, scopes, userEmail, requestId } = input;
  return layout(
    { title: `Allow ${clientName}?` },
    html`<h1>Allow ${clientName} to use your account?</h1>
${userEmail !== null && html`<p>Signed in as <strong>${userEmail}</strong>.</p>`}
<h2 id="scopes-heading">${clientName} is asking to:</h2>
<ul aria-labelledby="scopes-heading">
${scopes.map((scope) => html`<li>${SCOPE_DESCRIPTIONS[scope]} <span class="scope">(${scope})</span></li>\n`)}</ul>
<form method="post" action="${SIGN_IN_PATHS.consent}">
${csrfField(csrfToken)}
<input type="hidden" name="request" value="${requestId}">
<p><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
  );
}
