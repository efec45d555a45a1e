// Who is calling, as established by authentication. Handlers read it from `ctx.state.principal`
// and never parse credentials themselves.
import type { Actor } from '../event-store/event-store.js';

/** An organization API key (server to server). Acts for the admin who created it. */
export interface ApiKeyPrincipal {
  readonly kind: 'apiKey';
  readonly keyId: string;
  readonly orgId: number;
  /** The admin the key acts for: passes are attributed to and counted against this user. */
  readonly userId: number;
  readonly scopes: readonly string[];
}

/** A signed-in user through an OAuth access token (user-delegated endpoints). */
export interface UserPrincipal {
  readonly kind: 'user';
  readonly userId: number;
  readonly orgId: number;
  readonly clientId: string;
  readonly scopes: readonly string[];
}

export type Principal = ApiKeyPrincipal | UserPrincipal;

/** The actor recorded in the metadata of events a principal causes. */
export function actorOf(principal: Principal): Actor {
  return principal.kind === 'apiKey'
    ? { kind: 'apiKey', id: principal.keyId, userId: principal.userId }
    : { kind: 'user', id: principal.userId };
}

/** The authenticated principal of a request that passed an authentication middleware. */
export function requirePrincipal(state: { principal?: Principal }): Principal {
  if (!state.principal) throw new Error('route reached without authentication');
  return state.principal;
}
