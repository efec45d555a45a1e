// Remembered consent, one stream per user (`oauth-consents-{userId}`): the scopes the user has
// granted each client. A grant adds to what the client already had; a request for more than that
// asks again (the authorize endpoint compares, authorize-interaction.ts decides).
import type { Decider } from '../domain/decider.js';
import { ValidationError } from '../errors.js';
import type { OAuthConsentGranted } from '../oauth/oauth-events.js';
import { isClientId } from '../oauth/client-decider.js';
import { isOAuthScope, sortScopes, type OAuthScope } from '../oauth/scopes.js';

export interface ConsentState {
  /** Granted scopes by client id. */
  readonly granted: ReadonlyMap<string, readonly OAuthScope[]>;
}

export type ConsentCommand = { type: 'GrantConsent'; data: OAuthConsentGranted['data'] };

export const consentDecider: Decider<ConsentCommand, OAuthConsentGranted, ConsentState> = {
  initialState: () => ({ granted: new Map() }),

  evolve(state, event) {
    const granted = new Map(state.granted);
    granted.set(event.data.clientId, sortScopes([...(state.granted.get(event.data.clientId) ?? []), ...event.data.scopes]));
    return { granted };
  },

  decide(command, state) {
    const { userId, clientId, scopes } = command.data;
    if (!isClientId(clientId) || scopes.length === 0 || !scopes.every(isOAuthScope)) {
      throw new ValidationError('the consent is malformed');
    }
    // The page showed every requested scope and the user allowed them all: the event records
    // that whole set (an auditor sees what was on screen), unless it adds nothing.
    const already = state.granted.get(clientId) ?? [];
    if (scopes.every((s) => already.includes(s))) return [];
    const event: OAuthConsentGranted = { type: 'OAuthConsentGranted', data: { userId, clientId, scopes: sortScopes(scopes) } };
    return [event];
  },
};

/** The scopes the user has granted `clientId` so far. */
export function rememberedScopes(state: ConsentState, clientId: string): readonly OAuthScope[] {
  return state.granted.get(clientId) ?? [];
}
