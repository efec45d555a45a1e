import { expect } from 'chai';
import { generate } from 'otplib';
import { formatTotpSecret, isTotpSecret, newTotpSecret, normaliseTotpCode, totpUri, verifyTotp } from '../../shared/sign-in/totp.js';
import { TotpReplayGuard } from '../../shared/sign-in/totp-replay-guard.js';

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

describe('TOTP replay guard', () => {
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);

  it('accepts a step once per user, and only steps after the last accepted', () => {
    const guard = new TotpReplayGuard();
    expect(guard.lastStep(42, now)).to.equal(undefined);
    expect(guard.accept(42, step, now)).to.equal(true);
    expect(guard.lastStep(42, now)).to.equal(step);
    expect(guard.accept(42, step, now)).to.equal(false);
    expect(guard.accept(42, step - 1, now)).to.equal(false);
    expect(guard.accept(42, step + 1, now)).to.equal(true);
    expect(guard.accept(43, step, now)).to.equal(true);
  });

  it('forgets a user once no code of the remembered step can verify any more', () => {
    const guard = new TotpReplayGuard();
    guard.accept(42, step, now);
    expect(guard.lastStep(42, at(119))).to.equal(step);
    expect(guard.lastStep(42, at(121))).to.equal(undefined);
  });
});
