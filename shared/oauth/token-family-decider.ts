// A token family: everything issued from one authorization code (the access tokens carry its id,
// the refresh tokens rotate inside it). One stream per family, `token-family-{familyId}`, opened by
// the code redemption (TokenFamilyStarted). Refresh-token rotation is one append with an expected
// revision on this stream, so two refreshes of the same token can never both succeed.
//
// Replay is a result, not an error. Presenting a spent refresh token must (RFC 9700 §4.14.2, spec)
// revoke the whole family AND fail with invalid_grant. A thrown error would append nothing, so
// decide returns [TokenFamilyRevoked{reason: refresh_token_replay}]; the CommandHandler appends it,
// and the caller turns it into invalid_grant with `assertRotated(result.events)`.
//
// Concurrency: two concurrent rotations of the current token read the same revision; one append
// wins, the other gets WrongExpectedVersion, and the CommandHandler re-decides it on the new state,
// where the token it presents is now spent: replay, family revoked. So concurrent refreshes look
// like replay and revoke the family, as the spec says (within one process the handler serialises
// commands per stream, and the second command sees the spent token directly).
//
// An unknown token (neither current nor spent) only fails: it never revokes, so knowing a family
// id (it is in every access token) is not enough to revoke someone's grant.
import type { Decider } from '../domain/decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import { InvalidGrant } from './oauth-errors.js';
import type {
  GrantFacts,
  RefreshTokenRotated,
  TokenFamilyEvent,
  TokenFamilyRevocationReason,
  TokenFamilyRevoked,
  TokenFamilyStarted,
} from './oauth-events.js';
import { SHA256_HEX_PATTERN } from './opaque-credentials.js';
import { narrowedScopes, type OAuthScope } from './scopes.js';

const SHA256_HEX = new RegExp(SHA256_HEX_PATTERN);

/**
 * How long a family's refresh tokens are accepted after the code redemption (the spec leaves the
 * refresh-token lifetime open). Rotation does not extend it: re-authentication at least monthly.
 */
export const DEFAULT_TOKEN_FAMILY_LIFETIME_SECONDS = 30 * 24 * 3600;

export type TokenFamilyCommand =
  | {
      /** Opens the family after AuthorizationCodeRedeemed; refreshTokenHash null without offline_access. */
      type: 'StartTokenFamily';
      data: GrantFacts & { familyId: string; codeHash: string; refreshTokenHash: string | null; expiresAt: string };
    }
  | {
      /** The refresh_token grant. The caller has authenticated the client and parsed the token. */
      type: 'RotateRefreshToken';
      data: {
        familyId: string;
        clientId: string;
        presentedTokenHash: string;
        newTokenHash: string;
        /** The request's `scope` parameter (RFC 6749 §6: may narrow, never widen); undefined if absent. */
        scope?: string;
        now: string;
      };
    }
  | {
      /** RFC 7009 revocation by the owning client: a no-op unless the token is one of the family's. */
      type: 'RevokeRefreshToken';
      data: { familyId: string; clientId: string; presentedTokenHash: string };
    }
  | {
      /** Trusted internal revocation (code replay, logout, client deleted). Allowed before the family starts. */
      type: 'RevokeTokenFamily';
      data: { familyId: string; reason: TokenFamilyRevocationReason };
    };

export interface FamilyGrant extends GrantFacts {
  readonly familyId: string;
  readonly expiresAt: string;
}

export type TokenFamilyState =
  | { readonly status: 'absent' }
  | {
      readonly status: 'active';
      readonly grant: FamilyGrant;
      /** The one refresh token that may be presented next; null when offline_access was not granted. */
      readonly currentTokenHash: string | null;
      readonly spentTokenHashes: ReadonlySet<string>;
    }
  | {
      readonly status: 'revoked';
      /** Null when the family was revoked before it started (a code replay raced the redemption). */
      readonly grant: FamilyGrant | null;
      readonly reason: TokenFamilyRevocationReason;
    };

function revoked(familyId: string, reason: TokenFamilyRevocationReason): TokenFamilyRevoked {
  return { type: 'TokenFamilyRevoked', data: { familyId, reason } };
}

export const tokenFamilyDecider: Decider<TokenFamilyCommand, TokenFamilyEvent, TokenFamilyState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'TokenFamilyStarted': {
        const { codeHash: _codeHash, refreshTokenHash, ...grant } = event.data;
        return { status: 'active', grant, currentTokenHash: refreshTokenHash, spentTokenHashes: new Set() };
      }
      case 'RefreshTokenRotated': {
        if (state.status !== 'active') return state;
        const spent = new Set(state.spentTokenHashes).add(event.data.spentTokenHash);
        return { ...state, currentTokenHash: event.data.newTokenHash, spentTokenHashes: spent };
      }
      case 'TokenFamilyRevoked':
        if (state.status === 'revoked') return state;
        return { status: 'revoked', grant: state.status === 'active' ? state.grant : null, reason: event.data.reason };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'StartTokenFamily': {
        // Revoked already: a replay of the code got here first. Both requests fail.
        if (state.status === 'revoked') throw new InvalidGrant();
        if (state.status === 'active') throw new ConflictError('token family already started');
        const { data } = command;
        if (!SHA256_HEX.test(data.codeHash)) throw new ValidationError('code hash must be SHA-256 hex');
        if (data.refreshTokenHash !== null && !SHA256_HEX.test(data.refreshTokenHash)) {
          throw new ValidationError('refresh token hash must be SHA-256 hex');
        }
        if (data.refreshTokenHash !== null && !data.scopes.includes('offline_access')) {
          throw new ValidationError('refresh tokens are only issued with offline_access');
        }
        const event: TokenFamilyStarted = { type: 'TokenFamilyStarted', data: { ...data } };
        return [event];
      }

      case 'RotateRefreshToken': {
        const { familyId, clientId, presentedTokenHash, newTokenHash, scope, now } = command.data;
        if (state.status !== 'active') throw new InvalidGrant();
        // RFC 6749 §6: the token must have been issued to the authenticated client. A foreign
        // client never learns anything nor changes the family.
        if (state.grant.clientId !== clientId) throw new InvalidGrant();
        if (state.spentTokenHashes.has(presentedTokenHash)) return [revoked(familyId, 'refresh_token_replay')];
        if (state.currentTokenHash === null || state.currentTokenHash !== presentedTokenHash) throw new InvalidGrant();
        if (Date.parse(now) >= Date.parse(state.grant.expiresAt)) throw new InvalidGrant();
        narrowedScopes(scope, state.grant.scopes); // invalid_scope when it would widen the grant
        if (!SHA256_HEX.test(newTokenHash) || newTokenHash === presentedTokenHash || state.spentTokenHashes.has(newTokenHash)) {
          throw new ValidationError('new refresh token hash must be a fresh SHA-256 hex digest');
        }
        const event: RefreshTokenRotated = {
          type: 'RefreshTokenRotated',
          data: { familyId, spentTokenHash: presentedTokenHash, newTokenHash },
        };
        return [event];
      }

      case 'RevokeRefreshToken': {
        const { familyId, clientId, presentedTokenHash } = command.data;
        // RFC 7009 §2.2: unknown, foreign or already revoked tokens are answered 200 with no change.
        if (state.status !== 'active' || state.grant.clientId !== clientId) return [];
        const known = state.currentTokenHash === presentedTokenHash || state.spentTokenHashes.has(presentedTokenHash);
        return known ? [revoked(familyId, 'revoked_by_client')] : [];
      }

      case 'RevokeTokenFamily': {
        if (state.status === 'revoked') return [];
        return [revoked(command.data.familyId, command.data.reason)];
      }
    }
  },
};

/**
 * After RotateRefreshToken: throws invalid_grant when the command revoked the family (replay)
 * instead of rotating. Call it on CommandHandler's `result.events`, after the append.
 */
export function assertRotated(events: readonly TokenFamilyEvent[]): RefreshTokenRotated {
  const rotated = events.find((e): e is RefreshTokenRotated => e.type === 'RefreshTokenRotated');
  if (!rotated) throw new InvalidGrant();
  return rotated;
}

/** The scopes an access token minted from this refresh may carry (validated by decide already). */
export function refreshedScopes(grant: FamilyGrant, scope: string | undefined): OAuthScope[] {
  return narrowedScopes(scope, grant.scopes);
}
