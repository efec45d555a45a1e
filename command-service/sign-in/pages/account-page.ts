// GET /account: who is signed in, the authenticator app (set up or on), passkeys (add, remove), sign out.
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { csrfField, layout } from './layout.js';
import { LAST_WAY_TO_SIGN_IN } from '../../../shared/sign-in/passkeys/passkey-decider.js';

export interface AccountPageInput {
  readonly csrfToken: string;
  readonly email: string | null;
  readonly totpEnrolled: boolean;
  /** Credential ids of the user's passkeys, in registration order. */
  readonly passkeyIds: readonly string[];
  /** Signed in recently enough to change authenticators (session-decider.ts); else a way to sign in again. */
  readonly mayChangeAuthenticators: boolean;
  /** The user keeps a way to sign in without any one passkey (remove-passkey.ts). */
  readonly passkeysRemovable: boolean;
}

export function accountPage(input: AccountPageInput): SafeHtml {
  const { csrfToken, email, totpEnrolled, passkeyIds, mayChangeAuthenticators, passkeysRemovable } = input;
  const passkeyCount = passkeyIds.length;
  // Named by the end of the credential id: enough to tell a user's few passkeys apart.
  const passkeyItem = (id: string) => html`<li>Passkey …${id.slice(-8)}${
    mayChangeAuthenticators && passkeysRemovable
      ? html` <form class="passkey-remove" method="post" action="${SIGN_IN_PATHS.passkeyRemove}">
${csrfField(csrfToken)}<input type="hidden" name="credential_id" value="${id}"><button type="submit">Remove</button>
</form>`
      : ''
  }</li>`;
  const signInAgain = (what: string) => html`<form class="reauthenticate" method="post" action="${SIGN_IN_PATHS.reauthenticate}">
${csrfField(csrfToken)}
<p>To ${what}, sign in again first. <button type="submit">Sign in again</button></p>
</form>`;
  return layout(
    { title: 'Your account', csrfToken, scripts: [SIGN_IN_PATHS.passkeyScript] },
    html`<h1>Your account</h1>
${email !== null && html`<p>Signed in as <strong>${email}</strong>.</p>`}
<section id="totp" aria-labelledby="totp-heading">
<h2 id="totp-heading">Authenticator app</h2>
${
  totpEnrolled
    ? html`<p id="totp-status">Two-step verification with an authenticator app is on.</p>`
    : html`<p id="totp-status">Two-step verification is off.</p>
${mayChangeAuthenticators ? html`<p><a href="${SIGN_IN_PATHS.totp}">Set up an authenticator app</a></p>` : signInAgain('set up an authenticator app')}`
}
</section>
<section id="passkeys" aria-labelledby="passkeys-heading">
<h2 id="passkeys-heading">Passkeys</h2>
<p id="passkey-status">${passkeyCount === 0 ? 'You have no passkeys yet.' : passkeyCount === 1 ? 'You have 1 passkey.' : `You have ${passkeyCount} passkeys.`}</p>
${passkeyCount > 0 && html`<ul id="passkey-list">${passkeyIds.map(passkeyItem)}</ul>`}
${passkeyCount > 0 && !passkeysRemovable && html`<p>${LAST_WAY_TO_SIGN_IN}</p>`}
${mayChangeAuthenticators ? html`<p><button id="passkey-register" type="button">Add a passkey</button></p>` : signInAgain('add a passkey')}
</section>
<form method="post" action="${SIGN_IN_PATHS.signOut}">
${csrfField(csrfToken)}
<p><button type="submit">Sign out</button></p>
</form>`,
  );
}
