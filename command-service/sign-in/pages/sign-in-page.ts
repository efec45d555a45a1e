// GET/POST /signin: email and password, then the other ways in (passkey, upstream provider).
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { csrfField, describedBy, fieldError, layout } from './layout.js';

/** The one message of every failed password sign-in: it must not tell which part was wrong. */
export const SIGN_IN_FAILED = 'Email or password is incorrect.';

export interface SignInPageInput {
  readonly csrfToken: string;
  readonly email: string;
  readonly error: string | null;
  /** The upstream provider's display name when federated sign-in is configured. */
  readonly federationName: string | null;
}

export function signInPage(input: SignInPageInput): SafeHtml {
  const { csrfToken, email, error, federationName } = input;
  return layout(
    { title: 'Sign in', csrfToken, scripts: [SIGN_IN_PATHS.passkeyScript] },
    html`<h1>Sign in</h1>
<form method="post" action="${SIGN_IN_PATHS.signIn}">
${csrfField(csrfToken)}
${fieldError('signin-error', error)}
<p><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${email}"${describedBy('signin-error', error)}></p>
<p><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${describedBy('signin-error', error)}></p>
<p><button type="submit">Sign in</button></p>
</form>
<section aria-labelledby="other-ways">
<h2 id="other-ways">Other ways to sign in</h2>
<p><button id="passkey-signin" type="button">Sign in with a passkey</button></p>
${
  federationName !== null &&
  html`<form method="post" action="${SIGN_IN_PATHS.federatedSignIn}">
${csrfField(csrfToken)}
<p><button type="submit">Sign in with ${federationName}</button></p>
</form>`
}
</section>`,
  );
}
