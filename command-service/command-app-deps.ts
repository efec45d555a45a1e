// What the command service's HTTP app is built from. Its own module, below app.ts and the route
// modules app.ts mounts, so a route module does not import the app that imports it.
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { RateLimiter, RateLimitPolicy } from '../shared/http/rate-limit.js';
import type { RateLimitStore } from '../shared/http/rate-limit-store.js';
import type { OAuthServices } from '../shared/oauth/oauth-services.js';
import type { CommandDeps } from './command-deps.js';

export interface CommandAppDeps extends CommandDeps {
  readonly logger: Logger;
  /**
   * `pageCursorSecret` (PAGE_CURSOR_SECRET) signs the console's page cursors, as the query app's:
   * every instance must be given the same one; null or absent, a random key per process.
   */
  readonly config: Pick<Config, 'trustProxy'> & Partial<Pick<Config, 'oauthClientRateLimit' | 'pageCursorSecret'>>;
  /** The authorization server's issuer, clients and keys. */
  readonly oauth: OAuthServices;
  /**
   * Where every rate limit and failure throttle counts (rate-limit-store.ts): shared by every
   * instance in production; in one process, give both apps one store. Omitted = in this app.
   */
  readonly rateLimitStore?: RateLimitStore;
  /** Replaces the organization API's per-IP bucket (tests and benchmarks change its policy). */
  readonly orgApiRateLimiter?: RateLimiter;
  /** Replaces the user-delegated API's per-user bucket (tests and benchmarks change its policy). */
  readonly userApiRateLimiter?: RateLimiter;
  /** Overrides of the protocol endpoints' per-address failure budgets (tests lower them). */
  readonly oauthFailureLimit?: Partial<RateLimitPolicy>;
}
