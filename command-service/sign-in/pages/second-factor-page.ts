// GET/POST /signin/second-factor: a TOTP code from the authenticator app, or a recovery code.
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { csrfField, describedBy, fieldError, layout } from './layout.js';

export const SECOND_FACTOR_FAILED = 'That code is not valid. Check it and try again.';

export function secondFactorPage(input: { readonly csrfToken: string; readonly error: string | null }): SafeHtml {
  const { csrfToken, error } = input;
  return layout(
    { title: 'Two-step verification' },
    html`<h1>Two-step verification</h1>
<form method="post" action="${SIGN_IN_PATHS.secondFactor}">
${csrfField(csrfToken)}
${fieldError('code-error', error)}
<p><label for="code">Authentication code</label>
<span id="code-hint" class="hint">Enter the 6-digit code from your authenticator app, or one of your recovery codes.</span>
<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="64"${describedBy('code-error', error, 'code-hint')}></p>
<p><button type="submit">Verify</button></p>
</form>
<p><a href="${SIGN_IN_PATHS.signIn}">Start again</a></p>`,
  );
}
