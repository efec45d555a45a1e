import { expect } from 'chai';
import { deciderSpec } from '../support/given-when-then.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import {
  AUTHORIZATION_CODE_TTL_SECONDS,
  authorizationCodeDecider,
  redemptionOutcome,
  type AuthorizationCodeCommand,
} from '../../shared/oauth/authorization-code-decider.js';
import { InvalidGrant } from '../../shared/oauth/oauth-errors.js';
import type { AuthorizationCodeIssued, AuthorizationCodeRedeemed, AuthorizationCodeReplayed } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { CHALLENGE, CONFIDENTIAL_CLIENT, FAMILY_ID, PUBLIC_CLIENT, VERIFIER, expectSchemaValid, grant } from './oauth-fixtures.js';

const spec = deciderSpec(authorizationCodeDecider);
const CODE_HASH = sha256Hex('the-code');
const ISSUED_AT = '2025-06-01T10:00:05.000Z';
const REDIRECT = PUBLIC_CLIENT.redirectUris[0]!;

const issue: AuthorizationCodeCommand = {
  type: 'IssueAuthorizationCode',
  data: { ...grant, codeHash: CODE_HASH, familyId: FAMILY_ID, redirectUri: REDIRECT, codeChallenge: CHALLENGE, nonce: 'n-0S6_WzA2Mj', now: ISSUED_AT },
};
const issued: AuthorizationCodeIssued = {
  type: 'AuthorizationCodeIssued',
  data: { ...grant, codeHash: CODE_HASH, familyId: FAMILY_ID, redirectUri: REDIRECT, codeChallenge: CHALLENGE, nonce: 'n-0S6_WzA2Mj', expiresAt: '2025-06-01T10:01:05.000Z' },
};
const redeemed: AuthorizationCodeRedeemed = { type: 'AuthorizationCodeRedeemed', data: { codeHash: CODE_HASH, familyId: FAMILY_ID, clientId: grant.clientId } };
const replayed = (clientId = grant.clientId): AuthorizationCodeReplayed => ({
  type: 'AuthorizationCodeReplayed',
  data: { codeHash: CODE_HASH, familyId: FAMILY_ID, clientId },
});

const redeem = (overrides: Partial<Extract<AuthorizationCodeCommand, { type: 'RedeemAuthorizationCode' }>['data']> = {}): AuthorizationCodeCommand => ({
  type: 'RedeemAuthorizationCode',
  data: { codeHash: CODE_HASH, clientId: grant.clientId, redirectUri: REDIRECT, codeVerifier: VERIFIER, now: '2025-06-01T10:00:30.000Z', ...overrides },
});

describe('authorization code decider', () => {
  describe('IssueAuthorizationCode', () => {
    it('issues a code that expires 60 s later', () => {
      expect(AUTHORIZATION_CODE_TTL_SECONDS).to.equal(60);
      expectSchemaValid(spec.given([]).when(issue).then([issued]));
    });

    it('keeps a null nonce', () => {
      const data = { ...issue.data, nonce: null } as Extract<AuthorizationCodeCommand, { type: 'IssueAuthorizationCode' }>['data'];
      spec.given([]).when({ type: 'IssueAuthorizationCode', data }).then([{ ...issued, data: { ...issued.data, nonce: null } }]);
    });

    it('refuses a raw code, a malformed family, client, challenge, scope, amr, sid or ids', () => {
      const bad: Array<Partial<Extract<AuthorizationCodeCommand, { type: 'IssueAuthorizationCode' }>['data']>> = [
        { codeHash: 'the-code' },
        { familyId: 'x' },
        { clientId: 'client' },
        { codeChallenge: 'short' },
        { scopes: [] },
        { scopes: ['admin' as never] },
        { amr: [] },
        { amr: ['magic' as never] },
        { sid: 'x' },
        { authTime: 'yesterday' },
        { userId: 0 },
        { orgId: 1.5 },
      ];
      for (const patch of bad) {
        spec.given([]).when({ type: 'IssueAuthorizationCode', data: { ...issue.data, ...patch } } as AuthorizationCodeCommand).thenThrows(ValidationError);
      }
    });

    it('never issues the same code twice', () => {
      spec.given([issued]).when(issue).thenThrows(ConflictError);
    });
  });

  describe('RedeemAuthorizationCode', () => {
    it('redeems a valid code once', () => {
      const events = spec.given([issued]).when(redeem()).then([redeemed]);
      expectSchemaValid(events);
      expect(redemptionOutcome(events)).to.deep.equal({ kind: 'redeemed', familyId: FAMILY_ID });
    });

    it('accepts the code up to the last millisecond of its 60 s', () => {
      spec.given([issued]).when(redeem({ now: '2025-06-01T10:01:04.999Z' })).then([redeemed]);
    });

    it('an unknown code (no stream) is invalid_grant', () => {
      spec.given([]).when(redeem()).thenThrows(InvalidGrant);
    });

    it('an expired code is invalid_grant and records nothing', () => {
      spec.given([issued]).when(redeem({ now: '2025-06-01T10:01:05.000Z' })).thenThrows(InvalidGrant);
    });

    it('a code issued to another client is invalid_grant', () => {
      spec.given([issued]).when(redeem({ clientId: CONFIDENTIAL_CLIENT.clientId })).thenThrows(InvalidGrant);
    });

    it('a redirect_uri that differs by a single byte is invalid_grant', () => {
      spec.given([issued]).when(redeem({ redirectUri: `${REDIRECT}/` })).thenThrows(InvalidGrant);
      spec.given([issued]).when(redeem({ redirectUri: REDIRECT.toUpperCase() })).thenThrows(InvalidGrant);
    });

    it('a wrong PKCE verifier is invalid_grant', () => {
      spec.given([issued]).when(redeem({ codeVerifier: VERIFIER.replace(/.$/, 'A') })).thenThrows(InvalidGrant);
      spec.given([issued]).when(redeem({ codeVerifier: CHALLENGE })).thenThrows(InvalidGrant);
    });

    it('a second redemption records the replay (it does not throw, so the fact is appended)', () => {
      const events = spec.given([issued, redeemed]).when(redeem()).then([replayed()]);
      expectSchemaValid(events);
      expect(redemptionOutcome(events)).to.deep.equal({ kind: 'replayed', familyId: FAMILY_ID });
    });

    it('a replay by anyone, with any verifier, after expiry, is still a replay', () => {
      spec
        .given([issued, redeemed])
        .when(redeem({ clientId: CONFIDENTIAL_CLIENT.clientId, codeVerifier: 'x'.repeat(43), now: '2025-06-02T00:00:00.000Z' }))
        .then([replayed(CONFIDENTIAL_CLIENT.clientId)]);
    });

    it('every further replay is recorded too (the family revocation it triggers is idempotent)', () => {
      spec.given([issued, redeemed, replayed()]).when(redeem()).then([replayed()]);
    });

    it('two concurrent redemptions: the loser, re-decided on the winner\'s state, is a replay', () => {
      const winner = authorizationCodeDecider.decide(redeem(), authorizationCodeDecider.evolve(authorizationCodeDecider.initialState(), issued));
      expect(winner).to.deep.equal([redeemed]);
      spec.given([issued, ...winner]).when(redeem()).then([replayed()]);
    });
  });

  describe('redemptionOutcome', () => {
    it('rejects an event list that is neither', () => {
      expect(() => redemptionOutcome([])).to.throw(/neither/);
    });
  });
});
