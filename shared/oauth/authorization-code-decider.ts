// An authorization code: one stream per code, named by the code's hash
// (`authorization-code-{sha256(code)}`), so the token endpoint finds it from the presented code
// alone and an unknown code is simply an empty stream. Single use is one append with an expected
// revision: of two concurrent redemptions exactly one appends AuthorizationCodeRedeemed, and the
// other, re-decided on the new state, is a replay.
//
// Replay (RFC 6749 §4.1.2, spec "Exchanging twice revokes the grant"): presenting a redeemed code
// appends AuthorizationCodeReplayed rather than throwing, because a thrown error appends nothing
// and the replay must be recorded. The caller then reads the outcome from the appended events
// (redemptionOutcome), revokes the token family named in the event (RevokeTokenFamily with reason
// `authorization_code_replay` on `token-family-{familyId}`) and answers invalid_grant. Every replay
// is recorded and triggers the (idempotent) revocation again, so a crash between the two appends
// is healed by the next replay.
//
// A successful redemption is followed by StartTokenFamily on the family stream. If a replay
// revoked the family first (the two requests raced), StartTokenFamily fails with invalid_grant,
// so both requests fail: never does a replayed code yield usable tokens.
import type { Decider } from '../domain/decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import { InvalidGrant } from './oauth-errors.js';
import {
  AMR_VALUES,
  CLIENT_ID_PATTERN,
  SESSION_ID_PATTERN,
  type AuthenticationMethod,
  type AuthorizationCodeEvent,
  type AuthorizationCodeIssued,
  type GrantFacts,
} from './oauth-events.js';
import { FAMILY_ID_PATTERN, SHA256_HEX_PATTERN } from './opaque-credentials.js';
import { isValidS256Challenge, verifyCodeVerifier } from './pkce.js';
import { isOAuthScope, sortScopes } from './scopes.js';

/** Spec: 60 s time to live (RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

const SHA256_HEX = new RegExp(SHA256_HEX_PATTERN);
const FAMILY_ID = new RegExp(FAMILY_ID_PATTERN);
const CLIENT_ID = new RegExp(CLIENT_ID_PATTERN);
const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

export type AuthorizationCodeCommand =
  | {
      type: 'IssueAuthorizationCode';
      data: GrantFacts & {
        codeHash: string;
        familyId: string;
        redirectUri: string;
        codeChallenge: string;
        nonce: string | null;
        /** ISO 8601 time of the request: the decider reads no clock. */
        now: string;
      };
    }
  | {
      type: 'RedeemAuthorizationCode';
      data: {
        codeHash: string;
        /** The authenticated (confidential) or identified (public) client at the token endpoint. */
        clientId: string;
        redirectUri: string;
        /** Already checked for the RFC 7636 length and alphabet (invalid_request otherwise). */
        codeVerifier: string;
        now: string;
      };
    };

export type IssuedCode = AuthorizationCodeIssued['data'];

export type AuthorizationCodeState =
  | { status: 'absent' }
  | { status: 'issued'; code: IssuedCode }
  | { status: 'redeemed'; code: IssuedCode };

export const authorizationCodeDecider: Decider<AuthorizationCodeCommand, AuthorizationCodeEvent, AuthorizationCodeState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'AuthorizationCodeIssued':
        return { status: 'issued', code: event.data };
      case 'AuthorizationCodeRedeemed':
        return state.status === 'absent' ? state : { status: 'redeemed', code: state.code };
      case 'AuthorizationCodeReplayed':
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'IssueAuthorizationCode': {
        const { now, ...facts } = command.data;
        // A hash collision of 256-bit codes does not happen; this guards against a caller bug.
        if (state.status !== 'absent') throw new ConflictError('authorization code already issued');
        checkIssue(facts);
        const expiresAt = new Date(Date.parse(now) + AUTHORIZATION_CODE_TTL_SECONDS * 1000).toISOString();
        return [
          {
            type: 'AuthorizationCodeIssued',
            data: {
              ...facts,
              scopes: sortScopes(facts.scopes),
              authTime: new Date(facts.authTime).toISOString(),
              expiresAt,
            },
          },
        ];
      }
      case 'RedeemAuthorizationCode': {
        const { codeHash, clientId, redirectUri, codeVerifier, now } = command.data;
        if (state.status === 'absent') throw new InvalidGrant();
        const { code } = state;
        // Second presentation, by anyone, at any time: the code leaked. Record it; the caller
        // revokes the family and answers invalid_grant.
        if (state.status === 'redeemed') {
          return [{ type: 'AuthorizationCodeReplayed', data: { codeHash, familyId: code.familyId, clientId } }];
        }
        // RFC 6749 §4.1.3, in its order: issued to this client, still valid, same redirect_uri;
        // then RFC 7636 §4.6: the verifier matches the challenge. Each is the same invalid_grant.
        if (code.clientId !== clientId) throw new InvalidGrant();
        if (Date.parse(now) >= Date.parse(code.expiresAt)) throw new InvalidGrant();
        if (code.redirectUri !== redirectUri) throw new InvalidGrant();
        if (!verifyCodeVerifier(codeVerifier, code.codeChallenge)) throw new InvalidGrant();
        return [{ type: 'AuthorizationCodeRedeemed', data: { codeHash, familyId: code.familyId, clientId } }];
      }
    }
  },
};

function checkIssue(facts: Omit<Extract<AuthorizationCodeCommand, { type: 'IssueAuthorizationCode' }>['data'], 'now'>): void {
  // Shapes that keep secrets and garbage out of the log; the authorize endpoint has already
  // validated the request, so failing here is a bug in the caller.
  if (!SHA256_HEX.test(facts.codeHash)) throw new ValidationError('code hash must be SHA-256 hex');
  if (!FAMILY_ID.test(facts.familyId)) throw new ValidationError('malformed token family id');
  if (!CLIENT_ID.test(facts.clientId)) throw new ValidationError('malformed client id');
  if (!Number.isSafeInteger(facts.orgId) || facts.orgId < 1) throw new ValidationError('malformed organization id');
  if (!Number.isSafeInteger(facts.userId) || facts.userId < 1) throw new ValidationError('malformed user id');
  if (!isValidS256Challenge(facts.codeChallenge)) throw new ValidationError('malformed code challenge');
  if (facts.scopes.length === 0 || !facts.scopes.every(isOAuthScope)) throw new ValidationError('invalid scopes');
  if (facts.amr.length === 0 || !facts.amr.every((m) => (AMR_VALUES as readonly AuthenticationMethod[]).includes(m))) {
    throw new ValidationError('invalid authentication methods');
  }
  if (!SESSION_ID.test(facts.sid)) throw new ValidationError('malformed session id');
  if (Number.isNaN(Date.parse(facts.authTime))) throw new ValidationError('malformed auth_time');
}

export type RedemptionOutcome =
  | { readonly kind: 'redeemed'; readonly familyId: string }
  | { readonly kind: 'replayed'; readonly familyId: string };

/**
 * What a RedeemAuthorizationCode did, read from the events it appended (CommandHandler's
 * `result.events`). On `replayed` the caller must revoke the family and answer invalid_grant.
 */
export function redemptionOutcome(events: readonly AuthorizationCodeEvent[]): RedemptionOutcome {
  for (const event of events) {
    if (event.type === 'AuthorizationCodeRedeemed') return { kind: 'redeemed', familyId: event.data.familyId };
    if (event.type === 'AuthorizationCodeReplayed') return { kind: 'replayed', familyId: event.data.familyId };
  }
  throw new Error('RedeemAuthorizationCode appended neither AuthorizationCodeRedeemed nor AuthorizationCodeReplayed');
}
