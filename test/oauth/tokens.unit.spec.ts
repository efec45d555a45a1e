import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { InvalidTokenError } from '../../shared/errors.js';
import { InMemorySigningKeyStore } from '../../shared/oauth/in-memory-signing-key-store.js';
import { SigningKeys, generateSigningKey, toJwks, type ActiveSigningKey, type JsonWebKeySet } from '../../shared/oauth/signing-keys.js';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  ID_TOKEN_TTL_SECONDS,
  accessTokenAudience,
  accessTokenHash,
  localKeySet,
  mintAccessToken,
  mintIdToken,
  refreshingKeySet,
  verifyAccessToken,
  verifyIdTokenHint,
  UnknownHintKeyError,
  type AccessTokenInput,
} from '../../shared/oauth/tokens.js';
import { FAMILY_ID, ISSUER, PUBLIC_CLIENT, SID } from './oauth-fixtures.js';

const AUDIENCE = accessTokenAudience(ISSUER);
const NOW = new Date('2025-06-01T10:00:00.000Z');
const kek = randomBytes(32);

describe('tokens', () => {
  let key: ActiveSigningKey;
  let jwks: JsonWebKeySet;
  let otherKey: ActiveSigningKey;

  before(async () => {
    const generated = await generateSigningKey(kek, NOW);
    key = generated.key;
    jwks = toJwks([generated.record]);
    otherKey = (await generateSigningKey(kek, NOW)).key;
  });

  const access = (overrides: Partial<AccessTokenInput> = {}): AccessTokenInput => ({
    issuer: ISSUER,
    audience: AUDIENCE,
    subject: '42',
    clientId: PUBLIC_CLIENT.clientId,
    scopes: ['passes:read', 'openid'],
    familyId: FAMILY_ID,
    now: NOW,
    ...overrides,
  });
  const verify = (token: string, now = new Date(NOW.getTime() + 1000)) => verifyAccessToken(token, localKeySet(jwks), { issuer: ISSUER, audience: AUDIENCE, now });

  async function rejected(promise: Promise<unknown>): Promise<void> {
    let thrown: unknown;
    try {
      await promise;
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(InvalidTokenError);
  }

  describe('access token (RFC 9068)', () => {
    it('is an RS256 JWT with typ at+jwt and the kid of the signing key', async () => {
      const { token } = await mintAccessToken(key, access());
      expect(decodeProtectedHeader(token)).to.deep.equal({ alg: 'RS256', typ: 'at+jwt', kid: key.kid });
    });

    it('carries iss, sub, aud, client_id, scope, exp = iat + 900, iat, jti and the family', async () => {
      const { token, expiresIn, claims } = await mintAccessToken(key, access());
      expect(expiresIn).to.equal(ACCESS_TOKEN_TTL_SECONDS).and.equal(900);
      const payload = decodeJwt(token);
      expect(payload).to.deep.equal(claims);
      expect(payload).to.include({ iss: ISSUER, sub: '42', aud: AUDIENCE, client_id: PUBLIC_CLIENT.clientId, scope: 'openid passes:read', family_id: FAMILY_ID });
      expect(payload.exp! - payload.iat!).to.equal(900);
      expect(payload.jti).to.match(/^[0-9a-f-]{36}$/);
      expect((await mintAccessToken(key, access())).claims.jti).to.not.equal(payload.jti);
    });

    it('never outlives its grant', async () => {
      const { expiresIn } = await mintAccessToken(key, access({ notAfter: new Date(NOW.getTime() + 60_000) }));
      expect(expiresIn).to.equal(60);
      await mintAccessToken(key, access({ notAfter: NOW })).then(
        () => expect.fail('a token of an ended grant'),
        (error) => expect(error).to.be.instanceOf(RangeError),
      );
    });

    it('verifies offline against the JWKS', async () => {
      const { token, claims } = await mintAccessToken(key, access());
      expect(await verify(token)).to.deep.equal(claims);
    });

    it('is refused once expired', async () => {
      const { token } = await mintAccessToken(key, access());
      await rejected(verify(token, new Date(NOW.getTime() + 900_000)));
      expect(await verify(token, new Date(NOW.getTime() + 899_000))).to.have.property('sub', '42');
    });

    it('is refused when signed by a key not in the JWKS', async () => {
      await rejected(verify((await mintAccessToken(otherKey, access())).token));
    });

    it('is refused with a tampered payload or signature', async () => {
      const { token } = await mintAccessToken(key, access());
      const [h, p, s] = token.split('.');
      const payload = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: '1' })).toString('base64url');
      await rejected(verify(`${h}.${payload}.${s}`));
      await rejected(verify(`${h}.${p}.${s!.slice(0, -4)}AAAA`));
    });

    it('is refused for another issuer or audience', async () => {
      await rejected(verify((await mintAccessToken(key, access({ issuer: 'https://evil.example' }))).token));
      await rejected(verify((await mintAccessToken(key, access({ audience: 'https://other.example/api' }))).token));
    });

    it('refuses an id_token (typ JWT) presented as an access token', async () => {
      const idToken = await mintIdToken(key, { issuer: ISSUER, subject: '42', clientId: AUDIENCE, nonce: null, authTime: NOW.toISOString(), amr: ['pwd'], sid: SID, now: NOW });
      await rejected(verify(idToken));
    });

    it('refuses a token without typ, with another typ, or with alg none / HS256', async () => {
      const claims = decodeJwt((await mintAccessToken(key, access())).token);
      const sign = (header: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, ...header }).sign(key.privateKey);
      await rejected(verify(await sign({})));
      await rejected(verify(await sign({ typ: 'JWT' })));
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
      await rejected(verify(none));
      const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(randomBytes(32));
      await rejected(verify(hs));
    });

    it('accepts the long form application/at+jwt (RFC 9068 §4)', async () => {
      const claims = decodeJwt((await mintAccessToken(key, access())).token);
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'application/at+jwt' }).sign(key.privateKey);
      expect(await verify(token)).to.have.property('sub', '42');
    });

    it('refuses a token missing a claim the service relies on', async () => {
      const claims = decodeJwt((await mintAccessToken(key, access())).token);
      for (const name of ['sub', 'client_id', 'scope', 'jti', 'family_id', 'exp']) {
        const partial = { ...claims };
        delete partial[name];
        const token = await new SignJWT(partial).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' }).sign(key.privateKey);
        await rejected(verify(token));
      }
    });

    it('refuses garbage', async () => {
      for (const junk of ['', 'abc', 'a.b.c', 'Bearer x']) await rejected(verify(junk));
    });
  });

  describe('id_token', () => {
    const input = { issuer: ISSUER, subject: '42', clientId: PUBLIC_CLIENT.clientId, nonce: 'n-0S6', authTime: '2025-06-01T09:59:30.000Z', amr: ['pwd', 'otp', 'mfa'] as const, sid: SID, now: NOW };

    it('carries sub, aud, iss, exp, iat, auth_time, amr, nonce and sid; typ JWT', async () => {
      const token = await mintIdToken(key, { ...input, amr: [...input.amr] });
      expect(decodeProtectedHeader(token)).to.deep.equal({ alg: 'RS256', typ: 'JWT', kid: key.kid });
      const iat = NOW.getTime() / 1000;
      expect(decodeJwt(token)).to.deep.equal({
        iss: ISSUER,
        sub: '42',
        aud: PUBLIC_CLIENT.clientId,
        exp: iat + ID_TOKEN_TTL_SECONDS,
        iat,
        auth_time: iat - 30,
        amr: ['pwd', 'otp', 'mfa'],
        sid: SID,
        nonce: 'n-0S6',
      });
    });

    it('leaves out a missing nonce; adds at_hash when given the access token; azp only with several audiences', async () => {
      const payload = decodeJwt(await mintIdToken(key, { ...input, amr: ['hwk', 'user'], nonce: null, accessToken: 'abc', additionalAudiences: ['https://rs.example'] }));
      expect(payload).to.not.have.property('nonce');
      expect(payload.at_hash).to.equal(accessTokenHash('abc'));
      expect(payload.aud).to.deep.equal([PUBLIC_CLIENT.clientId, 'https://rs.example']);
      expect(payload.azp).to.equal(PUBLIC_CLIENT.clientId);
      expect(decodeJwt(await mintIdToken(key, { ...input, amr: ['fed'] }))).to.not.have.property('azp');
    });

    it('at_hash is the left half of SHA-256, base64url (OIDC Core §3.1.3.6)', () => {
      // 16 bytes -> 22 characters.
      expect(accessTokenHash('any token')).to.match(/^[A-Za-z0-9_-]{22}$/);
    });

    describe('as id_token_hint (authorize, logout)', () => {
      it('verifies even when expired, returning sub, aud and sid', async () => {
        const token = await mintIdToken(key, { ...input, amr: ['pwd'], now: new Date('2020-01-01T00:00:00Z'), authTime: '2020-01-01T00:00:00Z' });
        expect(await verifyIdTokenHint(token, localKeySet(jwks), { issuer: ISSUER })).to.deep.equal({ sub: '42', aud: [PUBLIC_CLIENT.clientId], sid: SID });
      });

      it('refuses another key, another issuer, an access token, a tampered token and garbage', async () => {
        const hint = (token: string) => verifyIdTokenHint(token, localKeySet(jwks), { issuer: ISSUER });
        await rejected(hint(await mintIdToken(otherKey, { ...input, amr: ['pwd'] })));
        await rejected(hint(await mintIdToken(key, { ...input, amr: ['pwd'], issuer: 'https://evil.example' })));
        await rejected(hint((await mintAccessToken(key, access())).token));
        const good = await mintIdToken(key, { ...input, amr: ['pwd'] });
        const [h, , s] = good.split('.');
        await rejected(hint(`${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(good), sub: '1' })).toString('base64url')}.${s}`));
        for (const junk of ['', 'x', 'a.b.c']) await rejected(hint(junk));
      });

      it('tells a key the set does not hold (rotated out) from a bad token, and a key set that cannot load from both', async () => {
        const unknownKey = await verifyIdTokenHint(await mintIdToken(otherKey, { ...input, amr: ['pwd'] }), localKeySet(jwks), { issuer: ISSUER }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(unknownKey).to.be.instanceOf(UnknownHintKeyError);
        const tampered = await verifyIdTokenHint('a.b.c', localKeySet(jwks), { issuer: ISSUER }).then(() => null, (e: unknown) => e);
        expect(tampered).to.be.instanceOf(InvalidTokenError).and.not.be.instanceOf(UnknownHintKeyError);
        const down = new Error('key store unreachable');
        const unloadable = await verifyIdTokenHint(await mintIdToken(key, { ...input, amr: ['pwd'] }), async () => Promise.reject(down), { issuer: ISSUER }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(unloadable).to.equal(down);
      });
    });
  });

  describe('refreshingKeySet', () => {
    it('reloads when a token names an unknown kid (a key rotated in elsewhere), at most once per interval', async () => {
      const store = new InMemorySigningKeyStore();
      const keys = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: ID_TOKEN_TTL_SECONDS });
      let loads = 0;
      let clock = 0;
      const resolver = refreshingKeySet(
        async () => {
          loads++;
          return keys.jwks(NOW);
        },
        { minReloadMs: 5_000, maxAgeMs: 60_000, clock: () => clock },
      );
      const options = { issuer: ISSUER, audience: AUDIENCE, now: NOW };
      const first = await mintAccessToken(await keys.current(NOW), access());
      await verifyAccessToken(first.token, resolver, options);
      await verifyAccessToken(first.token, resolver, options);
      expect(loads).to.equal(1);

      await keys.rotate(NOW);
      const second = await mintAccessToken(await keys.current(NOW), access());
      clock = 1_000; // too soon to reload for an unknown kid
      await rejected(verifyAccessToken(second.token, resolver, options));
      expect(loads).to.equal(1);
      clock = 6_000;
      await verifyAccessToken(second.token, resolver, options);
      await verifyAccessToken(first.token, resolver, options); // the old key is still published
      expect(loads).to.equal(2);
    });
  });
});
