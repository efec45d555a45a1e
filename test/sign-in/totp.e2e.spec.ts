// Two-step verification end to end: enrolling an authenticator app from the account page (QR
// code, confirmation, recovery codes), then password plus TOTP or a recovery code at sign-in.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { generate } from 'otplib';
import { startStack, type Stack } from '../support/stack.js';
import { acceptTotpCode } from '../../command-service/sign-in/totp-check.js';
import { CommandHandler } from '../../shared/event-store/command-handler.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { credentialsDecider } from '../../shared/sign-in/credentials-decider.js';
import { Browser, csrfTokenOf } from './support/browser.js';
import { authorizeInBrowser, submitPassword, totpCandidates } from './support/sign-in-driver.js';
import { codeIssued, pkce, signedInBrowser, startedSession } from './support/session-probe.js';

interface Enrolled {
  readonly userId: number;
  readonly email: string;
  readonly password: string;
  readonly secret: string;
  readonly recoveryCodes: string[];
}

describe('two-step verification (TOTP and recovery codes)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let orgId: number;

  before(async () => {
    stack = await startStack({ label: 'signin_totp' });
    ({ orgId } = await stack.seed.tenant());
  });
  after(async () => {
    await stack?.stop();
  });

  const secretOf = (page: string) => /<code id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page)![1]!.replace(/ /g, '');
  const recoveryCodesOf = (page: string) => [...page.matchAll(/<li><code>([0-9a-z-]+)<\/code><\/li>/g)].map((m) => m[1]!);
  const credentialEvents = (userId: number) => stack.store.readStream(oauthStreams.userCredentials(userId));
  const acceptedSteps = async (userId: number) =>
    (await credentialEvents(userId)).filter((e) => e.type === 'TotpCodeAccepted').map((e) => (e.data as { timeStep: number }).timeStep);

  /** A new user who has turned on TOTP through the account page. */
  async function enrolledUser(): Promise<Enrolled & { browser: Browser; enrolmentCode: string }> {
    const u = await stack.seed.user(orgId);
    const browser = await signedInBrowser(stack, u.email, u.password!);
    const page = await browser.get('/account/totp');
    const secret = secretOf(page.text);
    // The previous step's code: leaves the current and next steps for the sign-ins of the test.
    const code = (await totpCandidates(secret))[0]!;
    const done = await browser.post('/account/totp', { csrf: csrfTokenOf(page.text), code });
    expect(done.status).to.equal(200);
    return { userId: u.userId, email: u.email, password: u.password!, secret, recoveryCodes: recoveryCodesOf(done.text), browser, enrolmentCode: code };
  }

  /** Password accepted, second factor pending: the browser and the second-factor page's CSRF token. */
  async function halfSignedIn(user: { email: string; password: string }, baseUrl = stack.baseUrl): Promise<{ browser: Browser; csrf: string }> {
    const browser = new Browser(baseUrl);
    expect(await submitPassword(browser, user.email, user.password)).to.equal('/signin/second-factor');
    const page = await browser.get('/signin/second-factor');
    expect(page.status).to.equal(200);
    return { browser, csrf: csrfTokenOf(page.text) };
  }

  describe('enrolment (GET/POST /account/totp)', () => {
    it('needs a session', async () => {
      expect((await new Browser(stack.baseUrl).get('/account/totp')).location).to.equal('/signin');
    });

    it('shows a QR code as an inline PNG and the secret, kept the same on reload, sealed in a Strict cookie', async () => {
      const u = await stack.seed.user(orgId);
      const browser = await signedInBrowser(stack, u.email, u.password!);
      const page = await browser.get('/account/totp');
      expect(page.status).to.equal(200);
      expect(page.headers.get('cache-control')).to.equal('no-store');
      expect(page.text).to.match(/<img id="totp-qr" src="data:image\/png;base64,[A-Za-z0-9+/=]{100,}"/);
      const secret = secretOf(page.text);
      expect(secret).to.match(/^[A-Z2-7]{32}$/);
      const cookie = page.setCookies.find((c) => c.name === 'gp_totp');
      expect(cookie?.attributes).to.include({ httponly: true, secure: true, samesite: 'Strict' });
      expect(cookie?.value).to.not.include(secret);
      expect(secretOf((await browser.get('/account/totp')).text)).to.equal(secret);
      // Another user's browser gets another secret.
      const other = await stack.seed.user(orgId);
      const otherBrowser = await signedInBrowser(stack, other.email, other.password!);
      expect(secretOf((await otherBrowser.get('/account/totp')).text)).to.not.equal(secret);
    });

    it('refuses a wrong code (400, same secret shown), then a right one turns TOTP on with ten recovery codes shown once', async () => {
      const u = await stack.seed.user(orgId);
      const browser = await signedInBrowser(stack, u.email, u.password!);
      const page = await browser.get('/account/totp');
      const secret = secretOf(page.text);
      const csrf = csrfTokenOf(page.text);
      const wrong = await browser.post('/account/totp', { csrf, code: '000000' === (await generate({ secret })) ? '111111' : '000000' });
      expect(wrong.status).to.equal(400);
      expect(wrong.text).to.include('That code is not valid');
      expect(wrong.text).to.include('aria-invalid="true"');
      expect(secretOf(wrong.text)).to.equal(secret);
      expect(await credentialEvents(u.userId)).to.deep.equal([]);

      // The code of a known step: the enrolment must record that step as spent.
      const epoch = Math.floor(Date.now() / 1000);
      const done = await browser.post('/account/totp', { csrf, code: await generate({ secret, epoch }) });
      expect(done.status).to.equal(200);
      expect(done.headers.get('cache-control')).to.equal('no-store');
      const codes = recoveryCodesOf(done.text);
      expect(codes).to.have.length(10);
      expect(done.setCookies.find((c) => c.name === 'gp_totp')?.attributes['max-age']).to.equal('0');

      const events = await credentialEvents(u.userId);
      expect(events.map((e) => e.type)).to.deep.equal(['TotpEnrolled', 'RecoveryCodesIssued', 'TotpCodeAccepted']);
      expect(events[2]!.data).to.deep.equal({ userId: u.userId, timeStep: Math.floor(epoch / 30) });
      const stored = JSON.stringify(events.map((e) => e.data));
      expect(stored).to.not.include(secret);
      for (const code of codes) expect(stored).to.not.include(code);
      expect((events[1]!.data as { codeHashes: string[] }).codeHashes).to.deep.equal(codes.map((c) => sha256Hex(c.replace(/-/g, ''))));
      expect((events[0]!.data as { secret: { keyId: string } }).secret.keyId).to.be.a('string');
      expect(events[0]!.metadata.actor).to.deep.equal({ kind: 'user', id: u.userId });

      const account = await browser.get('/account');
      expect(account.text).to.include('Two-step verification with an authenticator app is on.');
      expect((await browser.get('/account/totp')).location).to.equal('/account');
    });

    it('needs the CSRF token (403)', async () => {
      const u = await stack.seed.user(orgId);
      const browser = await signedInBrowser(stack, u.email, u.password!);
      const page = await browser.get('/account/totp');
      const res = await browser.post('/account/totp', { code: await generate({ secret: secretOf(page.text) }) });
      expect(res.status).to.equal(403);
      expect(await credentialEvents(u.userId)).to.deep.equal([]);
    });
  });

  describe('sign-in with a second factor', () => {
    it('the password alone is not enough: no session until the second factor', async () => {
      const user = await enrolledUser();
      const { browser } = await halfSignedIn(user);
      expect(browser.jar.get('gp_session')).to.equal(undefined);
      const mfa = browser.jar.get('gp_mfa');
      expect(mfa).to.be.a('string');
      expect((await browser.get('/account')).location).to.equal('/signin');
    });

    it('password plus TOTP: session with amr pwd, otp, mfa, and the code carries it', async () => {
      const user = await enrolledUser();
      const client = await stack.seed.client(orgId);
      const result = await authorizeInBrowser(stack, {
        email: user.email,
        password: user.password,
        totpSecret: user.secret,
        clientId: client.clientId,
        redirectUri: client.redirectUri,
        scope: 'openid',
        codeChallenge: pkce().challenge,
        state: 'totp',
      });
      expect(result.hops.map((h) => h.split('?')[0])).to.deep.equal([
        '/api/oauth/authorize',
        '/signin',
        '/signin/second-factor',
        '/api/oauth/authorize',
        '/consent',
        '/api/oauth/authorize',
        client.redirectUri,
      ]);
      expect((await startedSession(stack, result.browser)).amr).to.deep.equal(['pwd', 'otp', 'mfa']);
      expect((await codeIssued(stack, result.code))?.data).to.deep.include({ amr: ['pwd', 'otp', 'mfa'], userId: user.userId });
      expect(result.browser.jar.get('gp_mfa')).to.equal(undefined);
    });

    it('a TOTP code is accepted once: the same code in another browser is refused', async () => {
      const user = await enrolledUser();
      const first = await halfSignedIn(user);
      let accepted: string | null = null;
      for (const code of await totpCandidates(user.secret)) {
        const res = await first.browser.post('/signin/second-factor', { csrf: first.csrf, code });
        if (res.status === 302) {
          accepted = code;
          break;
        }
      }
      expect(accepted).to.not.equal(null);
      const second = await halfSignedIn(user);
      const replay = await second.browser.post('/signin/second-factor', { csrf: second.csrf, code: accepted! });
      expect(replay.status).to.equal(400);
      expect(second.browser.jar.get('gp_session')).to.equal(undefined);
    });

    it('the code that confirmed the enrolment does not also pass the second factor', async () => {
      const user = await enrolledUser();
      const { browser, csrf } = await halfSignedIn(user);
      const res = await browser.post('/signin/second-factor', { csrf, code: user.enrolmentCode });
      expect(res.status).to.equal(400);
      expect(browser.jar.get('gp_session')).to.equal(undefined);
      expect(await acceptedSteps(user.userId)).to.have.length(1);
    });

    it('a TOTP code accepted through one gateway is refused through another over the same database', async () => {
      // Another gateway with its own command app: whatever an app keeps in memory, it does not share.
      const other = await stack.serve({ issuer: stack.baseUrl });
      try {
        const user = await enrolledUser();
        const first = await halfSignedIn(user);
        const candidates = await totpCandidates(user.secret);
        let accepted = -1;
        for (const [i, code] of candidates.entries()) {
          if ((await first.browser.post('/signin/second-factor', { csrf: first.csrf, code })).status === 302) {
            accepted = i;
            break;
          }
        }
        expect(accepted).to.be.oneOf([0, 1]);

        const second = await halfSignedIn(user, other.baseUrl);
        const replay = await second.browser.post('/signin/second-factor', { csrf: second.csrf, code: candidates[accepted]! });
        expect(replay.status).to.equal(400);
        expect(second.browser.jar.get('gp_session')).to.equal(undefined);
        // The other gateway is not refusing everything: the next step's code passes there.
        const next = await second.browser.post('/signin/second-factor', { csrf: second.csrf, code: candidates[accepted + 1]! });
        expect(next.status).to.equal(302);
        expect(second.browser.jar.get('gp_session')).to.be.a('string');
      } finally {
        await other.close();
      }
    });

    it('two concurrent submissions of one code: exactly one signs in', async () => {
      const user = await enrolledUser();
      const [a, b] = await Promise.all([halfSignedIn(user), halfSignedIn(user)]);
      // The current step's code: later than the enrolment's (previous step), so it is valid once.
      const code = (await totpCandidates(user.secret))[1]!;
      const results = await Promise.all([
        a.browser.post('/signin/second-factor', { csrf: a.csrf, code }),
        b.browser.post('/signin/second-factor', { csrf: b.csrf, code }),
      ]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([302, 400]);
      expect([a, b].filter((x) => x.browser.jar.get('gp_session') !== undefined)).to.have.length(1);
      // The enrolment's step and this code's, each once.
      const steps = await acceptedSteps(user.userId);
      expect(steps).to.have.length(2);
      expect(new Set(steps).size).to.equal(2);
    });

    it('two replicas (separate command handlers) racing to accept one code: exactly one wins', async () => {
      const user = await enrolledUser();
      const code = (await totpCandidates(user.secret))[1]!;
      // As two processes would: no shared cache or queue, only the stream's expected revision between them.
      const replicas = [new CommandHandler(stack.store), new CommandHandler(stack.store)];
      // Both read the stream before either accepts, so both verify the code: only the append can refuse one.
      const loaded = await Promise.all(replicas.map((handler) => handler.load(oauthStreams.userCredentials(user.userId), credentialsDecider)));
      const states = loaded.map((l) => l.state);
      const results = await Promise.all(
        replicas.map((handler, i) => {
          const context = { correlationId: randomUUID(), causationId: null, actor: { kind: 'user', id: user.userId } as const, now: new Date() };
          return acceptTotpCode({ handler }, { userId: user.userId, state: states[i]!, secret: user.secret, code }, context);
        }),
      );
      expect(results.sort()).to.deep.equal([false, true]);
      expect(await acceptedSteps(user.userId)).to.have.length(2);
    });

    it('a wrong code: 400 with the error tied to the field, no session', async () => {
      const user = await enrolledUser();
      const { browser, csrf } = await halfSignedIn(user);
      for (const code of ['12345', 'abcdef', '', 'aaaa-bbbb-cccc-dddd']) {
        const res = await browser.post('/signin/second-factor', { csrf, code });
        expect(res.status, code).to.equal(400);
        expect(res.text).to.include('That code is not valid').and.include('aria-describedby="code-hint code-error"');
      }
      expect(browser.jar.get('gp_session')).to.equal(undefined);
    });

    it('a recovery code signs in once (amr pwd, mfa), in any case and with spaces; the second use is refused', async () => {
      const user = await enrolledUser();
      const code = user.recoveryCodes[3]!;
      const first = await halfSignedIn(user);
      const res = await first.browser.post('/signin/second-factor', { csrf: first.csrf, code: code.toUpperCase().replace(/-/g, ' ') });
      expect(res.status).to.equal(302);
      expect(res.location).to.equal('/account');
      expect((await startedSession(stack, first.browser)).amr).to.deep.equal(['pwd', 'mfa']);
      const used = (await credentialEvents(user.userId)).filter((e) => e.type === 'RecoveryCodeUsed');
      expect(used.map((e) => e.data)).to.deep.equal([{ userId: user.userId, codeHash: sha256Hex(code.replace(/-/g, '')) }]);

      const second = await halfSignedIn(user);
      const again = await second.browser.post('/signin/second-factor', { csrf: second.csrf, code });
      expect(again.status).to.equal(400);
      expect(second.browser.jar.get('gp_session')).to.equal(undefined);
      // Another code of the set still works.
      const third = await second.browser.post('/signin/second-factor', { csrf: second.csrf, code: user.recoveryCodes[4]! });
      expect(third.status).to.equal(302);
    });

    it('without the pending state (no cookie, or an altered one) the browser starts again at /signin', async () => {
      const user = await enrolledUser();
      expect((await new Browser(stack.baseUrl).get('/signin/second-factor')).location).to.equal('/signin');
      const { browser, csrf } = await halfSignedIn(user);
      const mfa = browser.jar.get('gp_mfa')!;
      browser.jar.set('gp_mfa', `${mfa.slice(0, -3)}AAA`);
      const forged = await browser.post('/signin/second-factor', { csrf, code: user.recoveryCodes[0]! });
      expect(forged.status).to.equal(302);
      expect(forged.location).to.equal('/signin');
      expect(browser.jar.get('gp_session')).to.equal(undefined);
    });

    it('needs the CSRF token (403)', async () => {
      const user = await enrolledUser();
      const { browser } = await halfSignedIn(user);
      const res = await browser.post('/signin/second-factor', { code: user.recoveryCodes[0]! });
      expect(res.status).to.equal(403);
      expect((await credentialEvents(user.userId)).filter((e) => e.type === 'RecoveryCodeUsed')).to.deep.equal([]);
    });

    it('after 10 wrong codes for a user, further codes are refused (429), even a right one', async () => {
      const user = await enrolledUser();
      const { browser, csrf } = await halfSignedIn(user);
      for (let i = 0; i < 10; i++) expect((await browser.post('/signin/second-factor', { csrf, code: 'zzzz-zzzz-zzzz-zzz0' })).status).to.equal(400);
      const refused = await browser.post('/signin/second-factor', { csrf, code: user.recoveryCodes[0]! });
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(browser.jar.get('gp_session')).to.equal(undefined);
      expect((await credentialEvents(user.userId)).filter((e) => e.type === 'RecoveryCodeUsed')).to.deep.equal([]);
    });

    it('of 40 simultaneous wrong codes, exactly 10 are checked; the other 30 are refused (429, Retry-After) unchecked', async () => {
      const user = await enrolledUser();
      const { browser, csrf } = await halfSignedIn(user);
      // Six-digit codes: each one checked is a TOTP verification and a stream read.
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => browser.post('/signin/second-factor', { csrf, code: String(100000 + i) })));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 400), 'checked and wrong').to.have.length(10);
      expect(statuses.filter((s) => s === 429), 'refused before the check').to.have.length(30);
      for (const refused of answers.filter((a) => a.status === 429)) expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      const right = await browser.post('/signin/second-factor', { csrf, code: user.recoveryCodes[0]! });
      expect(right.status, 'the budget is spent').to.equal(429);
    });
  });
});
