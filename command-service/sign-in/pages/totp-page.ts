// GET/POST /account/totp: the enrolment QR code and secret, the confirmation code, and then the
// recovery codes, shown this once.
import { html, type SafeHtml } from '../../../shared/sign-in/html.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';
import { csrfField, describedBy, fieldError, layout } from './layout.js';

export const TOTP_CODE_REJECTED = 'That code is not valid. Check the time on your device and enter the current code.';

export interface TotpEnrolmentPageInput {
  readonly csrfToken: string;
  /** `data:image/png;base64,...` of the otpauth:// URI. */
  readonly qrCodeDataUrl: string;
  /** The secret grouped for typing. */
  readonly secretText: string;
  readonly error: string | null;
}

export function totpEnrolmentPage(input: TotpEnrolmentPageInput): SafeHtml {
  const { csrfToken, qrCodeDataUrl, secretText, error } = input;
  return layout(
    { title: 'Set up an authenticator app' },
    html`<h1>Set up an authenticator app</h1>
<ol>
<li><p>Scan this QR code with your authenticator app.</p>
<p><img id="totp-qr" src="${qrCodeDataUrl}" width="240" height="240" alt="QR code for your authenticator app. If you cannot scan it, enter the setup key shown below."></p>
<p>Or enter this setup key: <code id="totp-secret">${secretText}</code></p></li>
<li><form method="post" action="${SIGN_IN_PATHS.totp}">
${csrfField(csrfToken)}
${fieldError('totp-code-error', error)}
<p><label for="code">Enter the 6-digit code the app shows</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 ]*" autocomplete="one-time-code" required maxlength="16"${describedBy('totp-code-error', error)}></p>
<p><button type="submit">Turn on</button></p>
</form></li>
</ol>
<p><a href="${SIGN_IN_PATHS.account}">Back to your account</a></p>`,
  );
}

export function recoveryCodesPage(input: { readonly codes: readonly string[] }): SafeHtml {
  return layout(
    { title: 'Save your recovery codes' },
    html`<h1>Save your recovery codes</h1>
<p>Two-step verification is on. If you lose your authenticator app, each of these codes signs you in once instead of a code from the app. They are shown only now: store them somewhere safe.</p>
<ul id="recovery-codes" class="codes">
${input.codes.map((code) => html`<li><code>${code}</code></li>\n`)}</ul>
<p><a href="${SIGN_IN_PATHS.account}">I have saved them: back to your account</a></p>`,
  );
}
