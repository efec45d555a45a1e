// The client lookups of the protocol endpoints. Every token, introspection and revocation request
// authenticates its client, and a busy client (a resource server introspecting thousands of
// tokens a second) would otherwise cost one read-model query per request. Here, concurrent
// lookups of one client id share one query, and a found client is reused for `maxAgeMs`.
//
// What reuse costs: a client deleted in the read model keeps authenticating here for at most
// maxAgeMs more (the read model itself trails the event by its projection lag). Unknown ids are
// never remembered, so random ids cannot fill the cache and a new client works at once.
import type { ClientDirectory, OAuthClient } from '../../shared/oauth/client-decider.js';

export interface CoalescingClientDirectoryOptions {
  /** How long a found client is reused; 0 = only concurrent lookups are shared. */
  readonly maxAgeMs?: number;
  readonly maxEntries?: number;
  readonly clock?: () => number;
}

export const DEFAULT_CLIENT_MAX_AGE_MS = 1000;

export class CoalescingClientDirectory implements ClientDirectory {
  private readonly found = new Map<string, { client: OAuthClient; until: number }>();
  private readonly inFlight = new Map<string, Promise<OAuthClient | null>>();
  private readonly maxAgeMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;

  constructor(
    private readonly inner: ClientDirectory,
    options: CoalescingClientDirectoryOptions = {},
  ) {
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_CLIENT_MAX_AGE_MS;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

  findClient(clientId: string): Promise<OAuthClient | null> {
    const cached = this.found.get(clientId);
    if (cached && this.clock() < cached.until) return Promise.resolve(cached.client);
    let lookup = this.inFlight.get(clientId);
    if (!lookup) {
      lookup = this.inner.findClient(clientId).then(
        (client) => {
          this.inFlight.delete(clientId);
          this.remember(clientId, client);
          return client;
        },
        (error: unknown) => {
          this.inFlight.delete(clientId);
          throw error;
        },
      );
      this.inFlight.set(clientId, lookup);
    }
    return lookup;
  }

  private remember(clientId: string, client: OAuthClient | null): void {
    this.found.delete(clientId);
    if (client === null || this.maxAgeMs <= 0) return;
    this.found.set(clientId, { client, until: this.clock() + this.maxAgeMs });
    if (this.found.size > this.maxEntries) {
      const oldest = this.found.keys().next().value;
      if (oldest !== undefined) this.found.delete(oldest);
    }
  }
}
