import { expect } from 'chai';
import { deciderSpec } from '../support/given-when-then.js';
import { fold } from '../../shared/domain/decider.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import { InvalidGrant, InvalidScope } from '../../shared/oauth/oauth-errors.js';
import type { RefreshTokenRotated, TokenFamilyRevoked, TokenFamilyStarted } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import {
  assertRotated,
  tokenFamilyDecider,
  type TokenFamilyCommand,
} from '../../shared/oauth/token-family-decider.js';
import { CONFIDENTIAL_CLIENT, FAMILY_ID, expectSchemaValid, grant } from './oauth-fixtures.js';

const spec = deciderSpec(tokenFamilyDecider);
const h = (name: string) => sha256Hex(name);
const NOW = '2025-06-01T10:05:00.000Z';

const started: TokenFamilyStarted = {
  type: 'TokenFamilyStarted',
  data: { ...grant, familyId: FAMILY_ID, codeHash: h('code'), refreshTokenHash: h('rt1'), expiresAt: '2025-07-01T10:00:00.000Z' },
};
const rotated = (spent: string, next: string): RefreshTokenRotated => ({
  type: 'RefreshTokenRotated',
  data: { familyId: FAMILY_ID, spentTokenHash: h(spent), newTokenHash: h(next) },
});
const revoked = (reason: TokenFamilyRevoked['data']['reason']): TokenFamilyRevoked => ({
  type: 'TokenFamilyRevoked',
  data: { familyId: FAMILY_ID, reason },
});

const rotate = (presented: string, next: string, extra: Partial<Extract<TokenFamilyCommand, { type: 'RotateRefreshToken' }>['data']> = {}): TokenFamilyCommand => ({
  type: 'RotateRefreshToken',
  data: { familyId: FAMILY_ID, clientId: grant.clientId, presentedTokenHash: h(presented), newTokenHash: h(next), now: NOW, ...extra },
});

describe('token family decider', () => {
  describe('StartTokenFamily (after the code is redeemed)', () => {
    const start: TokenFamilyCommand = { type: 'StartTokenFamily', data: { ...started.data } };

    it('opens the family with the first refresh token', () => {
      expectSchemaValid(spec.given([]).when(start).then([started]));
    });

    it('opens a family without a refresh token when offline_access was not granted', () => {
      const data = { ...started.data, scopes: ['openid' as const], refreshTokenHash: null };
      expectSchemaValid(spec.given([]).when({ type: 'StartTokenFamily', data }).then([{ type: 'TokenFamilyStarted', data }]));
    });

    it('refuses a refresh token without offline_access', () => {
      spec.given([]).when({ type: 'StartTokenFamily', data: { ...started.data, scopes: ['openid'] } }).thenThrows(ValidationError);
    });

    it('refuses anything but hashes (a raw token must never reach the log)', () => {
      spec.given([]).when({ type: 'StartTokenFamily', data: { ...started.data, refreshTokenHash: 'raw-token' } }).thenThrows(ValidationError);
      spec.given([]).when({ type: 'StartTokenFamily', data: { ...started.data, codeHash: 'raw-code' } }).thenThrows(ValidationError);
    });

    it('fails with invalid_grant when a code replay revoked the family first (both requests fail)', () => {
      spec.given([revoked('authorization_code_replay')]).when(start).thenThrows(InvalidGrant);
    });

    it('cannot start twice', () => {
      spec.given([started]).when(start).thenThrows(ConflictError);
    });
  });

  describe('RotateRefreshToken', () => {
    it('given the current token, rotates to the new one', () => {
      expectSchemaValid(spec.given([started]).when(rotate('rt1', 'rt2')).then([rotated('rt1', 'rt2')]));
    });

    it('given a rotated family, accepts the newest token', () => {
      spec.given([started, rotated('rt1', 'rt2')]).when(rotate('rt2', 'rt3')).then([rotated('rt2', 'rt3')]);
    });

    it('given a spent token, revokes the whole family (replay) instead of throwing, so the revocation is appended', () => {
      const events = spec.given([started, rotated('rt1', 'rt2')]).when(rotate('rt1', 'rt9')).then([revoked('refresh_token_replay')]);
      expectSchemaValid(events);
      // ...and the caller still answers invalid_grant.
      expect(() => assertRotated(events)).to.throw(InvalidGrant);
    });

    it('detects replay of any earlier token, not only the last spent one', () => {
      spec
        .given([started, rotated('rt1', 'rt2'), rotated('rt2', 'rt3'), rotated('rt3', 'rt4')])
        .when(rotate('rt2', 'rt9'))
        .then([revoked('refresh_token_replay')]);
    });

    it('detects replay even after the family expired (the leak is still worth recording)', () => {
      spec.given([started, rotated('rt1', 'rt2')]).when(rotate('rt1', 'rt9', { now: '2025-08-01T00:00:00.000Z' })).then([revoked('refresh_token_replay')]);
    });

    it('after a replay every token of the family is refused, including the newest one', () => {
      spec.given([started, rotated('rt1', 'rt2'), revoked('refresh_token_replay')]).when(rotate('rt2', 'rt3')).thenThrows(InvalidGrant);
    });

    it('a token the family never issued is refused without revoking (knowing a family id is not enough)', () => {
      spec.given([started, rotated('rt1', 'rt2')]).when(rotate('forged', 'rt9')).thenThrows(InvalidGrant);
    });

    it('a token presented by another client is refused without revoking', () => {
      spec.given([started]).when(rotate('rt1', 'rt2', { clientId: CONFIDENTIAL_CLIENT.clientId })).thenThrows(InvalidGrant);
      spec.given([started, rotated('rt1', 'rt2')]).when(rotate('rt1', 'rt9', { clientId: CONFIDENTIAL_CLIENT.clientId })).thenThrows(InvalidGrant);
    });

    it('an expired family refuses its current token', () => {
      spec.given([started]).when(rotate('rt1', 'rt2', { now: '2025-07-01T10:00:00.000Z' })).thenThrows(InvalidGrant);
    });

    it('a family without refresh tokens refuses every refresh', () => {
      const noRefresh: TokenFamilyStarted = { type: 'TokenFamilyStarted', data: { ...started.data, scopes: ['openid'], refreshTokenHash: null } };
      spec.given([noRefresh]).when(rotate('rt1', 'rt2')).thenThrows(InvalidGrant);
    });

    it('an unknown family (no stream) is invalid_grant', () => {
      spec.given([]).when(rotate('rt1', 'rt2')).thenThrows(InvalidGrant);
    });

    it('may narrow the scope (RFC 6749 §6) but never widen it', () => {
      spec.given([started]).when(rotate('rt1', 'rt2', { scope: 'openid' })).then([rotated('rt1', 'rt2')]);
      spec.given([started]).when(rotate('rt1', 'rt2', { scope: 'openid passes:write' })).thenThrows(InvalidScope);
      spec.given([started]).when(rotate('rt1', 'rt2', { scope: 'openid  profile' })).thenThrows(InvalidScope);
    });

    it('refuses a malformed or reused new hash', () => {
      spec.given([started]).when(rotate('rt1', 'rt2', { newTokenHash: 'raw' })).thenThrows(ValidationError);
      spec.given([started]).when(rotate('rt1', 'rt1')).thenThrows(ValidationError);
    });

    it('two concurrent rotations: the loser, re-decided on the winner\'s state, revokes the family', () => {
      // Both read [started]; the winner appends rt1 -> rt2a. The CommandHandler retries the loser
      // on the new state, where rt1 is spent.
      const winner = tokenFamilyDecider.decide(rotate('rt1', 'rt2a'), fold(tokenFamilyDecider, [started]));
      expect(winner).to.deep.equal([rotated('rt1', 'rt2a')]);
      const loser = tokenFamilyDecider.decide(rotate('rt1', 'rt2b'), fold(tokenFamilyDecider, [started, ...winner]));
      expect(loser).to.deep.equal([revoked('refresh_token_replay')]);
      const final = fold(tokenFamilyDecider, [started, ...winner, ...loser]);
      expect(final.status).to.equal('revoked');
    });
  });

  describe('RevokeRefreshToken (RFC 7009, by the owning client)', () => {
    const revoke = (presented: string, clientId = grant.clientId): TokenFamilyCommand => ({
      type: 'RevokeRefreshToken',
      data: { familyId: FAMILY_ID, clientId, presentedTokenHash: h(presented) },
    });

    it('revokes the family for its current token', () => {
      spec.given([started]).when(revoke('rt1')).then([revoked('revoked_by_client')]);
    });

    it('revokes the family for a spent token of the family', () => {
      spec.given([started, rotated('rt1', 'rt2')]).when(revoke('rt1')).then([revoked('revoked_by_client')]);
    });

    it('does nothing for a token the family never issued, another client, an unknown or a revoked family', () => {
      spec.given([started]).when(revoke('forged')).thenNothing();
      spec.given([started]).when(revoke('rt1', CONFIDENTIAL_CLIENT.clientId)).thenNothing();
      spec.given([]).when(revoke('rt1')).thenNothing();
      spec.given([started, revoked('logout')]).when(revoke('rt1')).thenNothing();
    });
  });

  describe('RevokeTokenFamily (internal)', () => {
    const revokeFamily = (reason: TokenFamilyRevoked['data']['reason']): TokenFamilyCommand => ({
      type: 'RevokeTokenFamily',
      data: { familyId: FAMILY_ID, reason },
    });

    it('revokes an active family', () => {
      spec.given([started, rotated('rt1', 'rt2')]).when(revokeFamily('logout')).then([revoked('logout')]);
    });

    it('revokes a family that has not started yet (a code replay racing the redemption)', () => {
      const events = spec.given([]).when(revokeFamily('authorization_code_replay')).then([revoked('authorization_code_replay')]);
      expectSchemaValid(events);
      expect(fold(tokenFamilyDecider, events)).to.deep.equal({ status: 'revoked', grant: null, reason: 'authorization_code_replay' });
    });

    it('is idempotent: a revoked family records nothing more', () => {
      spec.given([started, revoked('refresh_token_replay')]).when(revokeFamily('authorization_code_replay')).thenNothing();
    });
  });

  describe('assertRotated', () => {
    it('returns the rotation', () => {
      expect(assertRotated([rotated('rt1', 'rt2')])).to.deep.equal(rotated('rt1', 'rt2'));
    });
    it('throws invalid_grant when the command revoked the family', () => {
      expect(() => assertRotated([revoked('refresh_token_replay')])).to.throw(InvalidGrant);
    });
  });
});
