// The sign-in pages as HTML: escaped values, labels and autocomplete, errors tied to fields, the
// hooks the passkey and federated methods rely on, and no inline script.
import { expect } from 'chai';
import { accountPage } from '../../command-service/sign-in/pages/account-page.js';
import { consentPage } from '../../command-service/sign-in/pages/consent-page.js';
import { homePage } from '../../command-service/sign-in/pages/home-page.js';
import { secondFactorPage } from '../../command-service/sign-in/pages/second-factor-page.js';
import { SIGN_IN_FAILED, signInPage } from '../../command-service/sign-in/pages/sign-in-page.js';
import { recoveryCodesPage, totpEnrolmentPage } from '../../command-service/sign-in/pages/totp-page.js';
import { SCOPE_DESCRIPTIONS } from '../../shared/oauth/scopes.js';
import { csrfTokenOf, inputValue } from './support/browser.js';

const EVIL = '"><script>alert(1)</script>';
const CSRF = 'tok_123-abc';

/** Every <script> of a page loads a same-origin file and has no inline body. */
function expectNoInlineScript(page: string): void {
  for (const m of page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
    expect(m[1]).to.match(/\bsrc="\/[^/]/);
    expect(m[2]).to.equal('');
  }
  expect(page).to.not.match(/\son[a-z]+=/i);
}

function tagOf(page: string, id: string): string {
  const m = new RegExp(`<[a-z]+\\b[^>]*\\bid="${id}"[^>]*>`).exec(page);
  if (!m) throw new Error(`no element #${id}`);
  return m[0];
}

describe('sign-in pages (HTML)', () => {
  describe('sign-in page', () => {
    const page = signInPage({ csrfToken: CSRF, email: EVIL, error: SIGN_IN_FAILED, federationName: `Acme ${EVIL}` }).value;

    it('is an English document with a title and one h1', () => {
      expect(page).to.match(/^<!doctype html>\n<html lang="en">/);
      expect(page).to.include('<title>Sign in · Guest Pass</title>');
      expect(page.match(/<h1>/g)).to.have.length(1);
    });

    it('escapes the typed email and the provider name', () => {
      expect(page).to.not.include('<script>alert(1)</script>');
      expect(inputValue(page, 'email')).to.equal(EVIL);
      expect(page).to.include('Sign in with Acme &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    });

    it('labels its fields with autocomplete hints and ties the error to them', () => {
      expect(page).to.include('<label for="email">Email</label>');
      expect(page).to.include('<label for="password">Password</label>');
      expect(tagOf(page, 'email')).to.include('autocomplete="username"').and.include('aria-describedby="signin-error"').and.include('aria-invalid="true"');
      expect(tagOf(page, 'password')).to.include('autocomplete="current-password"').and.include('type="password"');
      expect(tagOf(page, 'signin-error')).to.include('role="alert"');
      expect(page).to.include(SIGN_IN_FAILED);
    });

    it('has no error markup without an error', () => {
      const clean = signInPage({ csrfToken: CSRF, email: '', error: null, federationName: null }).value;
      expect(clean).to.not.include('aria-invalid');
      expect(clean).to.not.include('signin-error');
    });

    it('carries the CSRF token in the form and in the meta element for scripts', () => {
      expect(csrfTokenOf(page)).to.equal(CSRF);
      expect(page).to.include(`<meta name="csrf-token" content="${CSRF}">`);
    });

    it('offers the passkey button with its script, and the federated form only when configured', () => {
      expect(page).to.include('<button id="passkey-signin" type="button">');
      expect(page).to.include('<script src="/signin/passkey.js" defer></script>');
      expect(page).to.match(/<form method="post" action="\/signin\/federated">\s*<input type="hidden" name="csrf" value="tok_123-abc">/);
      const without = signInPage({ csrfToken: CSRF, email: '', error: null, federationName: null }).value;
      expect(without).to.not.include('/signin/federated');
    });

    it('has no inline script', () => expectNoInlineScript(page));
  });

  describe('second-factor page', () => {
    const page = secondFactorPage({ csrfToken: CSRF, error: 'That code is not valid.' }).value;
    it('asks for one code with a hint and the error tied to the field', () => {
      expect(page).to.include('<label for="code">');
      expect(tagOf(page, 'code')).to.include('autocomplete="one-time-code"').and.include('aria-describedby="code-hint code-error"');
      expect(tagOf(page, 'code-error')).to.include('role="alert"');
      expect(csrfTokenOf(page)).to.equal(CSRF);
      expectNoInlineScript(page);
    });
  });

  describe('consent page', () => {
    const page = consentPage({ csrfToken: CSRF, clientName: EVIL, scopes: ['openid', 'passes:write'], userEmail: 'uma@example.com', requestId: 'r'.repeat(64) }).value;

    it('names the client (escaped) and lists each scope with its description', () => {
      expect(page).to.not.include('<script>alert(1)</script>');
      expect(page).to.include('Allow &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; to use your account?');
      expect(page).to.include(`<li>${SCOPE_DESCRIPTIONS.openid} <span class="scope">(openid)</span></li>`);
      expect(page).to.include(`<li>${SCOPE_DESCRIPTIONS['passes:write']} <span class="scope">(passes:write)</span></li>`);
    });

    it('posts Allow or Deny with the CSRF token and the request id', () => {
      expect(page).to.include('<button type="submit" name="decision" value="allow">Allow</button>');
      expect(page).to.include('<button type="submit" name="decision" value="deny">Deny</button>');
      expect(inputValue(page, 'request')).to.equal('r'.repeat(64));
      expect(csrfTokenOf(page)).to.equal(CSRF);
      expectNoInlineScript(page);
    });
  });

  describe('account page', () => {
    it('shows the passkey area with its button and script, and the TOTP status', () => {
      const off = accountPage({ csrfToken: CSRF, email: EVIL, totpEnrolled: false, passkeyIds: ['Y3JlZGVudGlhbC1vbmU', 'Y3JlZGVudGlhbC10d28'], mayChangeAuthenticators: true, passkeysRemovable: true }).value;
      expect(off).to.match(/<section id="passkeys"[^>]*>[\s\S]*<button id="passkey-register" type="button">/);
      expect(off).to.include('<script src="/signin/passkey.js" defer></script>');
      expect(off).to.include(`<meta name="csrf-token" content="${CSRF}">`);
      expect(off).to.include('You have 2 passkeys.');
      // Each passkey, with a form that removes it (CSRF token, its credential id).
      expect(off).to.include('<li>Passkey …hbC10d28 <form class="passkey-remove" method="post" action="/account/passkeys/remove">');
      expect(off.match(/<form class="passkey-remove"/g)).to.have.length(2);
      expect(off).to.include('<input type="hidden" name="credential_id" value="Y3JlZGVudGlhbC10d28">');
      expect(off).to.include('href="/account/totp"');
      expect(off).to.not.include('<script>alert(1)</script>');
      const on = accountPage({ csrfToken: CSRF, email: null, totpEnrolled: true, passkeyIds: [], mayChangeAuthenticators: true, passkeysRemovable: true }).value;
      expect(on).to.include('Two-step verification with an authenticator app is on.');
      expect(on).to.not.include('href="/account/totp"');
      // Signed in too long ago to add an authenticator: a way to sign in again instead of the controls.
      const stale = accountPage({ csrfToken: CSRF, email: null, totpEnrolled: false, passkeyIds: ['Y3JlZGVudGlhbC1vbmU'], mayChangeAuthenticators: false, passkeysRemovable: true }).value;
      expect(stale).to.not.include('href="/account/totp"');
      expect(stale).to.include('You have 1 passkey.');
      expect(stale).to.not.include('passkey-remove');
      // The last passkey of a user with no other way to sign in: listed, not removable, and said why.
      const only = accountPage({ csrfToken: CSRF, email: null, totpEnrolled: false, passkeyIds: ['Y3JlZGVudGlhbC1vbmU'], mayChangeAuthenticators: true, passkeysRemovable: false }).value;
      expect(only).to.include('Passkey …hbC1vbmU');
      expect(only).to.not.include('passkey-remove');
      expect(only).to.include('your only way to sign in');
      expect(stale).to.not.include('id="passkey-register"');
      expect(stale).to.include('<form class="reauthenticate" method="post" action="/account/reauthenticate">');
      expect(stale).to.include('To add a passkey, sign in again first.');
      expect(stale).to.include('To set up an authenticator app, sign in again first.');
      expectNoInlineScript(off);
    });
  });

  describe('TOTP pages', () => {
    it('shows the QR code as an inline image with a text alternative, the secret, and a code field', () => {
      const page = totpEnrolmentPage({ csrfToken: CSRF, qrCodeDataUrl: 'data:image/png;base64,iVBORw0KGgo=', secretText: 'ABCD EFGH', error: null }).value;
      expect(tagOf(page, 'totp-qr')).to.include('src="data:image/png;base64,iVBORw0KGgo="').and.match(/alt="[^"]+"/);
      expect(page).to.include('<code id="totp-secret">ABCD EFGH</code>');
      expect(tagOf(page, 'code')).to.include('autocomplete="one-time-code"');
      expect(csrfTokenOf(page)).to.equal(CSRF);
    });

    it('lists the recovery codes', () => {
      const page = recoveryCodesPage({ codes: ['aaaa-bbbb-cccc-dddd', 'eeee-ffff-gggg-hhhh'] }).value;
      expect(page.match(/<li><code>/g)).to.have.length(2);
      expect(page).to.include('<li><code>aaaa-bbbb-cccc-dddd</code></li>');
    });
  });

  it('home page links to sign in or to the account', () => {
    expect(homePage({ signedIn: false }).value).to.include('href="/signin"');
    expect(homePage({ signedIn: true }).value).to.include('href="/account"');
  });
});
