// Federated links on a user's credentials stream (`user-credentials-{userId}`): which upstream
// OpenID Provider accounts (issuer + subject) sign this user in. The stream also holds passkey,
// TOTP and recovery-code events; this decider folds only FederatedIdentityLinked.
//
// Rules:
//   * a link is recorded once: linking an identity that is already linked records nothing, so
//     two callbacks racing for the same first sign-in both succeed and one event is written;
//   * one upstream account per issuer and user: once linked, another subject of the same issuer
//     (for example a new upstream account that was handed the same email address) is refused,
//     rather than quietly gaining access to the local account.
import type { Decider } from '../../domain/decider.js';
import { ConflictError, ValidationError } from '../../errors.js';
import type { FederatedIdentityLinked, UserCredentialEvent } from '../../oauth/oauth-events.js';

export interface FederatedLinkState {
  /** Linked subject by issuer. */
  readonly subjects: ReadonlyMap<string, string>;
}

export type FederatedLinkCommand = { type: 'LinkFederatedIdentity'; data: FederatedIdentityLinked['data'] };

const MAX_SUBJECT_LENGTH = 255;

export const federatedLinkDecider: Decider<FederatedLinkCommand, UserCredentialEvent, FederatedLinkState> = {
  initialState: () => ({ subjects: new Map() }),

  evolve(state, event) {
    if (event.type !== 'FederatedIdentityLinked') return state;
    if (state.subjects.has(event.data.issuer)) return state;
    const subjects = new Map(state.subjects);
    subjects.set(event.data.issuer, event.data.subject);
    return { subjects };
  },

  decide(command, state) {
    const { userId, orgId, issuer, subject } = command.data;
    if (!/^https?:\/\//.test(issuer) || subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH) {
      throw new ValidationError('the federated identity is malformed');
    }
    const linked = state.subjects.get(issuer);
    if (linked === subject) return [];
    if (linked !== undefined) throw new ConflictError('another account of this provider is already linked');
    const event: FederatedIdentityLinked = { type: 'FederatedIdentityLinked', data: { userId, orgId, issuer, subject } };
    return [event];
  },
};
