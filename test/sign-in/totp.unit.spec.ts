import { expect } from 'chai';
import { generate } from 'otplib';
import { verifyTotpCode } from '../../command-service/sign-in/totp-check.js';
import { fold } from '../../shared/domain/decider.js';
import type { UserCredentialEvent } from '../../shared/oauth/oauth-events.js';
import { credentialsDecider } from '../../shared/sign-in/credentials-decider.js';
import { formatTotpSecret, isTotpSecret, newTotpSecret, normaliseTotpCode, totpUri, verifyTotp } from '../../shared/sign-in/totp.js';

const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // RFC 6238 test key "12345678901234567890"
const now = new Date('2025-06-01T10:00:10.000Z');
const epoch = Math.floor(now.getTime() / 1000);
const step = Math.floor(epoch / 30);
const codeAt = (offsetSeconds: number) => generate({ secret, epoch: epoch + offsetSeconds });

describe('TOTP', () => {
  it('matches the RFC 6238 test vector (SHA-1, T = 59 s, 6 digits: 287082)', async () => {
    expect(await generate({ secret, epoch: 59 })).to.equal('287082');
    expect(await verifyTotp(secret, '287082', { now: new Date(59_000) })).to.equal(1);
  });

  it('accepts the current code and one step either side, and tells the step', async () => {
    expect(await verifyTotp(secret, await codeAt(0), { now })).to.equal(step);
    expect(await verifyTotp(secret, await codeAt(-30), { now })).to.equal(step - 1);
    expect(await verifyTotp(secret, await codeAt(30), { now })).to.equal(step + 1);
  });

  it('refuses codes two steps away, wrong codes and malformed input', async () => {
    expect(await verifyTotp(secret, await codeAt(-60), { now })).to.equal(null);
    expect(await verifyTotp(secret, await codeAt(60), { now })).to.equal(null);
    const right = await codeAt(0);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    expect(await verifyTotp(secret, wrong, { now })).to.equal(null);
    for (const bad of ['', '12345', '1234567', 'abcdef', '12 34 5']) expect(await verifyTotp(secret, bad, { now }), bad).to.equal(null);
    expect(await verifyTotp('not-base32', right, { now })).to.equal(null);
  });

  it('refuses a code whose step is not after the last accepted one', async () => {
    expect(await verifyTotp(secret, await codeAt(0), { now, afterStep: step })).to.equal(null);
    expect(await verifyTotp(secret, await codeAt(30), { now, afterStep: step })).to.equal(step + 1);
  });

  it('verifies against the credentials stream: only a step after its last TotpCodeAccepted', async () => {
    const sealed = { keyId: 'k1', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VjcmV0', tag: 'AAAAAAAAAAAAAAAAAAAAAA' };
    const enrolled: UserCredentialEvent = { type: 'TotpEnrolled', data: { userId: 42, secret: sealed } };
    const accepted = (timeStep: number): UserCredentialEvent => ({ type: 'TotpCodeAccepted', data: { userId: 42, timeStep } });
    const fresh = fold(credentialsDecider, [enrolled]);
    expect(await verifyTotpCode(fresh, secret, await codeAt(-30), now)).to.equal(step - 1);
    const spent = fold(credentialsDecider, [enrolled, accepted(step - 1), accepted(step)]);
    expect(await verifyTotpCode(spent, secret, await codeAt(-30), now)).to.equal(null);
    expect(await verifyTotpCode(spent, secret, await codeAt(0), now)).to.equal(null);
    expect(await verifyTotpCode(spent, secret, await codeAt(30), now)).to.equal(step + 1);
  });

  it('reads a code typed with spaces', async () => {
    const code = await codeAt(0);
    expect(normaliseTotpCode(`${code.slice(0, 3)} ${code.slice(3)}`)).to.equal(code);
    expect(await verifyTotp(secret, `${code.slice(0, 3)} ${code.slice(3)}`, { now })).to.equal(step);
  });

  it('makes 160-bit Base32 secrets, groups them for reading, and writes the otpauth URI', () => {
    const s = newTotpSecret();
    expect(isTotpSecret(s)).to.equal(true);
    expect(newTotpSecret()).to.not.equal(s);
    expect(formatTotpSecret('ABCDEFGHIJKL')).to.equal('ABCD EFGH IJKL');
    const uri = new URL(totpUri(secret, { issuer: 'Guest Pass', account: 'uma@example.com' }));
    expect(uri.protocol).to.equal('otpauth:');
    expect(uri.host).to.equal('totp');
    expect(decodeURIComponent(uri.pathname)).to.equal('/Guest Pass:uma@example.com');
    expect(uri.searchParams.get('secret')).to.equal(secret);
    expect(uri.searchParams.get('issuer')).to.equal('Guest Pass');
  });
});
