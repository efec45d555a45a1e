// At the protocol endpoints every error is an OAuth protocol error (spec: OAuth endpoints answer
// `{error, error_description}`). RFC-named errors and the rate limit's 429 pass through to the
// error middleware; anything else (the database is down, a decider refused a command it should
// never have been given) is logged here with its detail and becomes a bare server_error; a part
// that is down (the database restarting) is temporarily_unavailable, 503 with Retry-After, logged
// once per outage.
import { RateLimitedError } from '../../shared/errors.js';
import type { HttpMiddleware } from '../../shared/http/http-state.js';
import { OAuthError, ServerError, TemporarilyUnavailable } from '../../shared/oauth/oauth-errors.js';
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf, recordOutage } from '../../shared/outage/part-unavailable.js';

export function protocolErrors(): HttpMiddleware {
  return async function asProtocolErrors(ctx, next) {
    try {
      await next();
    } catch (error) {
      if (error instanceof OAuthError || error instanceof RateLimitedError) throw error;
      const outage = outageOf(error);
      if (outage !== null) {
        recordOutage(outage, ctx.state.log);
        throw new TemporarilyUnavailable('The authorization server is temporarily unavailable; try again shortly.', OUTAGE_RETRY_AFTER_SECONDS);
      }
      ctx.state.log.error({ err: error }, 'unexpected error at an OAuth protocol endpoint');
      throw new ServerError();
    }
  };
}
