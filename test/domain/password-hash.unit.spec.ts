import { expect } from 'chai';
import { hashPassword, PASSWORD_HASH_PATTERN, verifyPassword } from '../../shared/crypto/password-hash.js';

describe('password hash', () => {
  it('hashes into a self-describing scrypt string that verifies', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).to.match(new RegExp(PASSWORD_HASH_PATTERN));
    expect(hash).not.to.include('correct');
    expect(await verifyPassword('correct horse battery staple', hash)).to.equal(true);
    expect(await verifyPassword('correct horse battery stapler', hash)).to.equal(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same password')).not.to.equal(await hashPassword('same password'));
  });

  it('refuses too short a password and never throws on a malformed stored hash', async () => {
    let error: unknown;
    await hashPassword('short').catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(RangeError);
    expect(await verifyPassword('whatever1', 'plaintext')).to.equal(false);
    expect(await verifyPassword('whatever1', '$scrypt$ln=40,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g')).to.equal(false);
  });
});
