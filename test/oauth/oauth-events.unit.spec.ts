import { expect } from 'chai';
import { OAUTH_EVENT_SCHEMAS, oauthStreams } from '../../shared/oauth/oauth-events.js';
import { eventDataErrors } from '../../shared/domain/event-schemas.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { FAMILY_ID, OAUTH_SAMPLES } from './oauth-fixtures.js';

const h = sha256Hex('x');
const samples = OAUTH_SAMPLES;

describe('OAuth event schemas', () => {
  it('has a versioned schema for every OAuth event type', () => {
    expect(Object.keys(OAUTH_EVENT_SCHEMAS).sort()).to.deep.equal(samples.map((s) => s.type).sort());
    for (const { version, schema } of Object.values(OAUTH_EVENT_SCHEMAS)) {
      expect(version).to.equal(1);
      expect(schema.additionalProperties).to.equal(false);
    }
    // The catalogue they joined refuses a type it does not know.
    expect(eventDataErrors({ type: 'NoSuchOAuthEvent', data: {} })).to.have.length(1);
  });

  for (const sample of samples) {
    describe(sample.type, () => {
      it('accepts a valid event', () => {
        expect(eventDataErrors(sample)).to.deep.equal([]);
      });

      it('refuses unknown properties', () => {
        expect(eventDataErrors({ type: sample.type, data: { ...sample.data, extra: 1 } })).to.not.deep.equal([]);
      });

      it('refuses a missing property', () => {
        const [first] = Object.keys(sample.data);
        const data: Record<string, unknown> = { ...sample.data };
        delete data[first!];
        expect(eventDataErrors({ type: sample.type, data })).to.not.deep.equal([]);
      });

      it('refuses a raw credential where a hash belongs', () => {
        for (const field of ['secretHash', 'codeHash', 'refreshTokenHash', 'spentTokenHash', 'newTokenHash', 'sessionHash']) {
          if (!(field in sample.data)) continue;
          const data = { ...sample.data, [field]: 'Zm9vYmFyYmF6cXV4LXNlY3JldC0yNTYtYml0cy12YWx1ZQ' };
          expect(eventDataErrors({ type: sample.type, data }), field).to.not.deep.equal([]);
        }
      });
    });
  }

  it('refuses bad values', () => {
    const code = samples[2]!;
    const bad: Array<Record<string, unknown>> = [
      { amr: [] },
      { amr: ['magic'] },
      { scopes: ['admin'] },
      { scopes: [] },
      { userId: 0 },
      { authTime: 'yesterday' },
      { redirectUri: 'https://a.example/cb#frag' },
      { codeChallenge: 'short' },
      { familyId: 'FAMILY' },
      { sid: 'a b' },
    ];
    for (const patch of bad) expect(eventDataErrors({ type: code.type, data: { ...code.data, ...patch } }), JSON.stringify(patch)).to.not.deep.equal([]);
    expect(eventDataErrors({ type: 'TokenFamilyRevoked', data: { familyId: FAMILY_ID, reason: 'because' } })).to.not.deep.equal([]);
    expect(eventDataErrors({ type: 'OAuthClientRegistered', data: { ...samples[0]!.data, clientType: 'native' } })).to.not.deep.equal([]);
  });

  it('names one stream per consistency boundary', () => {
    expect(oauthStreams.clients(7)).to.equal('oauth-clients-7');
    expect(oauthStreams.authorizationCode(h)).to.equal(`authorization-code-${h}`);
    expect(oauthStreams.tokenFamily(FAMILY_ID)).to.equal(`token-family-${FAMILY_ID}`);
  });
});
