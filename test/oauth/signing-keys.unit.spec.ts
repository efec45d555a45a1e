import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { InMemorySigningKeyStore } from '../../shared/oauth/in-memory-signing-key-store.js';
import {
  KeyEncryptionKeyError,
  keyEncryptionKeyId,
  loadOrCreateKeyEncryptionKey,
  open,
  parseKeyEncryptionKey,
  seal,
} from '../../shared/oauth/key-encryption-key.js';
import { SigningKeys, generateSigningKey, unsealSigningKey } from '../../shared/oauth/signing-keys.js';
import { ID_TOKEN_TTL_SECONDS, localKeySet, mintAccessToken, verifyAccessToken } from '../../shared/oauth/tokens.js';
import { FAMILY_ID, ISSUER } from './oauth-fixtures.js';

const NOW = new Date('2025-06-01T10:00:00.000Z');
const kek = randomBytes(32);

describe('key-encryption key', () => {
  it('parses 32 bytes from hex, base64 and base64url, and nothing else', () => {
    const key = randomBytes(32);
    expect(parseKeyEncryptionKey(key.toString('hex'))).to.deep.equal(key);
    expect(parseKeyEncryptionKey(key.toString('base64'))).to.deep.equal(key);
    expect(parseKeyEncryptionKey(` ${key.toString('base64url')}\n`)).to.deep.equal(key);
    for (const bad of ['', 'short', randomBytes(16).toString('hex'), randomBytes(33).toString('base64'), 'z'.repeat(64)]) {
      expect(() => parseKeyEncryptionKey(bad), bad).to.throw(KeyEncryptionKeyError);
    }
  });

  it('is generated once into the data folder with mode 0600 and then reused', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kek-'));
    try {
      const file = path.join(dir, 'keys', 'oauth-kek');
      const [a, b] = await Promise.all([loadOrCreateKeyEncryptionKey(file), loadOrCreateKeyEncryptionKey(file)]);
      expect(a).to.have.length(32);
      expect(b).to.deep.equal(a);
      expect(await loadOrCreateKeyEncryptionKey(file)).to.deep.equal(a);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      await writeFile(file, 'garbage');
      await loadOrCreateKeyEncryptionKey(file).then(
        () => expect.fail('a corrupt KEK file must stop the start'),
        (error) => expect(error).to.be.instanceOf(KeyEncryptionKeyError),
      );
      expect(await readFile(file, 'utf8')).to.equal('garbage');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('seals with AES-256-GCM: round trip, and refuses tampering, another context or another KEK', () => {
    const sealed = seal(Buffer.from('private key'), kek, 'kid-1');
    expect(sealed.ciphertext.toString()).to.not.contain('private');
    expect(open(sealed, kek, 'kid-1').toString()).to.equal('private key');
    const flip = (b: Buffer) => Buffer.from(b.map((x, i) => (i === 0 ? x ^ 1 : x)));
    expect(() => open({ ...sealed, ciphertext: flip(sealed.ciphertext) }, kek, 'kid-1')).to.throw(KeyEncryptionKeyError, /authentication/);
    expect(() => open({ ...sealed, tag: flip(sealed.tag) }, kek, 'kid-1')).to.throw(KeyEncryptionKeyError);
    expect(() => open({ ...sealed, iv: flip(sealed.iv) }, kek, 'kid-1')).to.throw(KeyEncryptionKeyError);
    expect(() => open(sealed, kek, 'kid-2')).to.throw(KeyEncryptionKeyError);
    expect(() => open(sealed, randomBytes(32), 'kid-1')).to.throw(KeyEncryptionKeyError, /another key-encryption key/);
    // Even with a forged KEK id, the wrong key fails authentication.
    const other = randomBytes(32);
    expect(() => open({ ...sealed, kekId: keyEncryptionKeyId(other) }, other, 'kid-1')).to.throw(KeyEncryptionKeyError, /authentication/);
    expect(() => seal(Buffer.from('x'), randomBytes(16), 'k')).to.throw(KeyEncryptionKeyError);
  });
});

describe('signing keys', () => {
  it('generates an RS256 2048-bit key whose kid is its JWK thumbprint, private half sealed', async () => {
    const { record, key } = await generateSigningKey(kek, NOW);
    expect(record.publicJwk).to.have.keys(['kty', 'use', 'alg', 'kid', 'n', 'e']);
    expect(record.publicJwk).to.include({ kty: 'RSA', use: 'sig', alg: 'RS256', kid: record.kid, e: 'AQAB' });
    expect(Buffer.from(record.publicJwk.n, 'base64url')).to.have.length(256);
    expect(record.kid).to.equal(await calculateJwkThumbprint({ kty: 'RSA', n: record.publicJwk.n, e: 'AQAB' }));
    expect(record.privateKey.ciphertext.toString('latin1')).to.not.contain('PRIVATE KEY');
    expect(key.privateKey.extractable).to.equal(false);
    expect(record.rotatedAt).to.equal(null);
    const reopened = await unsealSigningKey(record, kek);
    expect(reopened.kid).to.equal(record.kid);
    await unsealSigningKey(record, randomBytes(32)).then(
      () => expect.fail('wrong KEK'),
      (error) => expect(error).to.be.instanceOf(KeyEncryptionKeyError),
    );
  });

  it('creates the first key on first use, then reuses it', async () => {
    const store = new InMemorySigningKeyStore();
    const keys = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: ID_TOKEN_TTL_SECONDS });
    const [a, b] = await Promise.all([keys.current(NOW), keys.current(NOW)]);
    expect(a.kid).to.equal(b.kid);
    expect((await store.published(NOW)).map((r) => r.kid)).to.deep.equal([a.kid]);
    expect((await keys.jwks(NOW)).keys.map((k) => k.kid)).to.deep.equal([a.kid]);
  });

  it('a second process starting at the same time adopts the first key', async () => {
    const store = new InMemorySigningKeyStore();
    const one = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 });
    const two = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 });
    const [a, b] = await Promise.all([one.current(NOW), two.current(NOW)]);
    expect(a.kid).to.equal(b.kid);
    expect(await store.published(NOW)).to.have.length(1);
  });

  it('rotation: the new key signs, the old one stays published until its tokens expired, then is deleted', async () => {
    const store = new InMemorySigningKeyStore();
    const keys = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 3600, cacheSeconds: 60 });
    const old = await keys.current(NOW);
    const oldToken = await mintAccessToken(old, { issuer: ISSUER, audience: ISSUER, subject: '1', clientId: `svc_${'a'.repeat(32)}`, scopes: ['openid'], familyId: FAMILY_ID, now: NOW });

    const rotation = await keys.rotate(NOW);
    expect(rotation.previousKid).to.equal(old.kid);
    expect(rotation.retireAfter.toISOString()).to.equal(new Date(NOW.getTime() + (3600 + 60) * 1000).toISOString());
    const current = await keys.current(NOW);
    expect(current.kid).to.equal(rotation.kid).and.not.equal(old.kid);

    const jwks = await keys.jwks(NOW);
    expect(jwks.keys.map((k) => k.kid)).to.deep.equal([rotation.kid, old.kid]);
    // A token signed by the old key still verifies during the overlap.
    const verified = await verifyAccessToken(oldToken.token, localKeySet(jwks), { issuer: ISSUER, audience: ISSUER, now: NOW });
    expect(verified.sub).to.equal('1');

    const later = new Date(rotation.retireAfter.getTime() + 1);
    expect((await keys.jwks(later)).keys.map((k) => k.kid)).to.deep.equal([rotation.kid]);
    // The next rotation deletes the retired key (its private half is destroyed).
    await keys.rotate(later);
    expect((await store.published(NOW)).map((r) => r.kid)).to.not.include(old.kid);
  });

  it('another process picks the rotated key up when its cache expires', async () => {
    const store = new InMemorySigningKeyStore();
    const signer = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900, cacheSeconds: 60 });
    const operator = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900, cacheSeconds: 60 });
    const before = await signer.current(NOW);
    const { kid } = await operator.rotate(NOW);
    expect((await signer.current(new Date(NOW.getTime() + 59_000))).kid).to.equal(before.kid);
    expect((await signer.current(new Date(NOW.getTime() + 60_000))).kid).to.equal(kid);
  });

  it('a process with the wrong KEK cannot sign', async () => {
    const store = new InMemorySigningKeyStore();
    await new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 }).current(NOW);
    await new SigningKeys(store, randomBytes(32), { maxTokenLifetimeSeconds: 900 }).current(NOW).then(
      () => expect.fail('wrong KEK'),
      (error) => expect(error).to.be.instanceOf(KeyEncryptionKeyError),
    );
  });
});
