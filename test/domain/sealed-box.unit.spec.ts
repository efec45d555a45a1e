import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { open, seal, SealedBoxError } from '../../shared/crypto/sealed-box.js';
import type { Sealed } from '../../shared/domain/events.js';
import { schemaVersionOf, validateEvent } from '../../shared/domain/event-schemas.js';
import { guestDetails, passData } from '../support/domain-fixtures.js';

const newKey = () => ({ keyId: randomUUID(), key: randomBytes(32) });

/** Flips one bit of a base64url field. */
function flip(field: string): string {
  const bytes = Buffer.from(field, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  return bytes.toString('base64url');
}

describe('sealed box', () => {
  it('round-trips a JSON value', () => {
    const key = newKey();
    const guest = guestDetails({ phone: '+4915112345678', qrValues: { gst_a: 'qr-a', gst_b: 'qr-b' } });
    const sealed = seal(key, guest);
    expect(open(key.key, sealed)).to.deep.equal(guest);
  });

  it('shows nothing of the value and uses a fresh IV every time', () => {
    const key = newKey();
    const a = seal(key, { email: 'ada@example.com' });
    const b = seal(key, { email: 'ada@example.com' });
    // The key id is a random UUID and the other fields are random base64url, so a short word such as
    // 'ada' turns up in them by chance; '@' and '.' cannot, so the address is looked for whole.
    expect(JSON.stringify(a)).not.to.include('ada@example.com');
    for (const field of [a.iv, a.ciphertext, a.tag]) expect(Buffer.from(field, 'base64url').toString('latin1')).not.to.include('ada@');
    expect(a.iv).not.to.equal(b.iv);
    expect(a.ciphertext).not.to.equal(b.ciphertext);
    expect(a.keyId).to.equal(key.keyId);
    for (const field of [a.iv, a.ciphertext, a.tag]) expect(field).to.match(/^[A-Za-z0-9_-]+$/);
  });

  it('fits the PassCreated schema', () => {
    const guest = seal(newKey(), guestDetails());
    expect(() => validateEvent('PassCreated', schemaVersionOf('PassCreated'), { ...passData(1), guest })).not.to.throw();
  });

  describe('detects tampering', () => {
    const key = newKey();
    const sealed = seal(key, { firstName: 'Ada' });
    const cases: Record<string, Sealed> = {
      ciphertext: { ...sealed, ciphertext: flip(sealed.ciphertext) },
      tag: { ...sealed, tag: flip(sealed.tag) },
      iv: { ...sealed, iv: flip(sealed.iv) },
      'key id (bound as associated data)': { ...sealed, keyId: randomUUID() },
      'truncated tag': { ...sealed, tag: sealed.tag.slice(0, 8) },
      'malformed iv': { ...sealed, iv: 'AAAA' },
    };
    for (const [name, tampered] of Object.entries(cases)) {
      it(`in the ${name}`, () => {
        expect(() => open(key.key, tampered)).to.throw(SealedBoxError);
      });
    }
  });

  it('refuses the wrong key', () => {
    const sealed = seal(newKey(), { firstName: 'Ada' });
    expect(() => open(randomBytes(32), sealed)).to.throw(SealedBoxError, /authentication/);
  });

  it('refuses keys that are not 256 bits', () => {
    expect(() => seal({ keyId: 'k', key: randomBytes(16) }, {})).to.throw(SealedBoxError);
    expect(() => open(randomBytes(31), seal(newKey(), {}))).to.throw(SealedBoxError);
  });
});
