// Introspection's access-token verification: a verified token is remembered until it expires or
// maxAgeMs passes; failures are never remembered.
import { expect } from 'chai';
import type { JWTVerifyGetKey } from 'jose';
import { generateSigningKey, toJwks } from '../../../shared/oauth/signing-keys.js';
import { localKeySet, mintAccessToken } from '../../../shared/oauth/tokens.js';
import { AccessTokenVerifier } from '../../../command-service/oauth/access-token-verifier.js';
import { FAMILY_ID, ISSUER, PUBLIC_CLIENT } from '../oauth-fixtures.js';

const AUDIENCE = `${ISSUER}/api`;
const KEK = new Uint8Array(32).fill(3);

describe('AccessTokenVerifier', function () {
  this.timeout(20_000);
  const issuedAt = new Date('2025-06-01T10:00:00.000Z');
  let token = '';
  let keys: JWTVerifyGetKey;
  let resolved = 0;
  let now = 0;
  const clock = () => now;

  before(async () => {
    const { record, key } = await generateSigningKey(KEK, issuedAt);
    const local = localKeySet(toJwks([record]));
    keys = (header, input) => {
      resolved++;
      return local(header, input);
    };
    token = (
      await mintAccessToken(key, {
        issuer: ISSUER,
        audience: AUDIENCE,
        subject: '42',
        clientId: PUBLIC_CLIENT.clientId,
        scopes: ['openid', 'passes:read'],
        familyId: FAMILY_ID,
        now: issuedAt,
      })
    ).token;
  });
  beforeEach(() => {
    resolved = 0;
    now = issuedAt.getTime() + 1000;
  });

  const verifier = (maxAgeMs = 60_000) => new AccessTokenVerifier(keys, { issuer: ISSUER, audience: AUDIENCE }, { maxAgeMs, clock });

  it('verifies a token once and reuses the claims while it is fresh', async () => {
    const v = verifier();
    const first = await v.verify(token);
    expect(first).to.include({ sub: '42', client_id: PUBLIC_CLIENT.clientId, family_id: FAMILY_ID, scope: 'openid passes:read' });
    now += 59_000;
    expect(await v.verify(token)).to.deep.equal(first);
    expect(resolved).to.equal(1);
  });

  it('verifies again after maxAgeMs', async () => {
    const v = verifier(10_000);
    await v.verify(token);
    now += 10_000;
    expect(await v.verify(token)).to.not.equal(null);
    expect(resolved).to.equal(2);
  });

  it('answers null once the token has expired, even if it was remembered', async () => {
    const v = verifier(3_600_000);
    expect(await v.verify(token)).to.not.equal(null);
    now = issuedAt.getTime() + 900_000;
    expect(await v.verify(token)).to.equal(null);
  });

  it('answers null for a tampered token or garbage, and does not remember failures', async () => {
    const v = verifier();
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: '43' })).toString('base64url')}.${signature}`;
    expect(await v.verify(tampered)).to.equal(null);
    expect(await v.verify(tampered)).to.equal(null);
    expect(resolved).to.equal(2);
    expect(await v.verify('garbage')).to.equal(null);
  });

  it('checks issuer and audience', async () => {
    expect(await new AccessTokenVerifier(keys, { issuer: 'https://other.example', audience: AUDIENCE }, { clock }).verify(token)).to.equal(null);
    expect(await new AccessTokenVerifier(keys, { issuer: ISSUER, audience: 'https://other.example/api' }, { clock }).verify(token)).to.equal(null);
  });
});
