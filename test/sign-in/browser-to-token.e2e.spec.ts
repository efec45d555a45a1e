// The browser side and the token endpoint together: a sign-in with password and TOTP through the
// pages yields a code the token endpoint redeems for an id_token that tells how and when the user
// signed in, and that id_token then signs the browser out.
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { startStack, type Stack } from '../support/stack.js';
import { Browser, csrfTokenOf } from './support/browser.js';
import { authorizeInBrowser, totpCandidates } from './support/sign-in-driver.js';
import { pkce, sessionEnd, signedInBrowser, startedSession } from './support/session-probe.js';

describe('sign-in pages to token endpoint to logout', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ label: 'signin_interop' });
  });
  after(async () => {
    await stack?.stop();
  });

  it('password + TOTP → code → id_token with amr, auth_time, sid and nonce → logout with that id_token', async () => {
    const { orgId } = await stack.seed.tenant();
    const u = await stack.seed.user(orgId);
    const client = await stack.seed.client(orgId);
    // Turn on TOTP from the account page.
    const enrolling = await signedInBrowser(stack, u.email, u.password!);
    const page = await enrolling.get('/account/totp');
    const secret = /<code id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
    expect((await enrolling.post('/account/totp', { csrf: csrfTokenOf(page.text), code: (await totpCandidates(secret))[0]! })).status).to.equal(200);

    const { verifier, challenge } = pkce();
    const browser = new Browser(stack.baseUrl);
    const result = await authorizeInBrowser(stack, {
      browser,
      email: u.email,
      password: u.password!,
      totpSecret: secret,
      clientId: client.clientId,
      redirectUri: client.redirectUri,
      scope: 'openid profile',
      codeChallenge: challenge,
      state: 'interop',
      nonce: 'nonce-interop',
    });
    const session = await startedSession(stack, browser);

    const token = await fetch(`${stack.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: result.code,
        redirect_uri: client.redirectUri,
        code_verifier: verifier,
        client_id: client.clientId,
      }),
    });
    expect(token.status).to.equal(200);
    const body = (await token.json()) as { id_token?: string };
    expect(body.id_token).to.be.a('string');
    const claims = decodeJwt(body.id_token!);
    expect(claims).to.deep.include({
      iss: stack.baseUrl,
      sub: String(u.userId),
      aud: client.clientId,
      amr: ['pwd', 'otp', 'mfa'],
      sid: session.sid,
      nonce: 'nonce-interop',
      auth_time: Math.floor(Date.parse(session.authTime) / 1000),
    });

    const logout = await browser.get(
      `/api/oauth/logout?${new URLSearchParams({ id_token_hint: body.id_token!, post_logout_redirect_uri: 'https://app.example.test/signed-out', state: 'out' })}`,
    );
    expect(logout.status).to.equal(302);
    expect(logout.location).to.equal('https://app.example.test/signed-out?state=out');
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
  });
});
