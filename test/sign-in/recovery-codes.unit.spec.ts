import { expect } from 'chai';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { RECOVERY_CODE_COUNT, newRecoveryCodes, normaliseRecoveryCode, recoveryCodeHash } from '../../shared/sign-in/recovery-codes.js';

describe('recovery codes', () => {
  it('issues ten distinct codes of four groups of four from the unambiguous alphabet', () => {
    const codes = newRecoveryCodes();
    expect(codes).to.have.length(RECOVERY_CODE_COUNT).and.to.have.length(10);
    expect(new Set(codes).size).to.equal(10);
    for (const code of codes) expect(code).to.match(/^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    expect(newRecoveryCodes()).to.not.deep.equal(codes);
  });

  it('reads what the user typed regardless of case, spaces and dashes, and O/I/L as 0/1/1', () => {
    expect(normaliseRecoveryCode('ABCD-EFGH-JKMN-PQRS')).to.equal('abcdefghjkmnpqrs');
    expect(normaliseRecoveryCode(' abcd efgh jkmn pqrs ')).to.equal('abcdefghjkmnpqrs');
    expect(normaliseRecoveryCode('OOOO-IIII-LLLL-0000')).to.equal('0000111111110000');
  });

  it('refuses what cannot be a code: wrong length, U, other characters', () => {
    expect(normaliseRecoveryCode('abcd-efgh-jkmn')).to.equal(null);
    expect(normaliseRecoveryCode('abcd-efgh-jkmn-pqrst')).to.equal(null);
    expect(normaliseRecoveryCode('abcd-efgh-jkmn-pqru')).to.equal(null);
    expect(normaliseRecoveryCode('123456')).to.equal(null);
    expect(normaliseRecoveryCode('abcd-efgh-jkmn-pq!s')).to.equal(null);
  });

  it('stores only the SHA-256 of the normalised code: the same for every way of typing it', () => {
    const [code] = newRecoveryCodes(1);
    const hash = recoveryCodeHash(code!);
    expect(hash).to.equal(sha256Hex(code!.replace(/-/g, '')));
    expect(recoveryCodeHash(code!.toUpperCase().replace(/-/g, ' '))).to.equal(hash);
    expect(recoveryCodeHash('nonsense')).to.equal(null);
  });
});
