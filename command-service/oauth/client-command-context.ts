// The CommandContext of a protocol request: the request id correlates the events, and the OAuth
// client that made the request is the actor (the user is not present at these endpoints).
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { HttpContext } from '../../shared/http/http-state.js';
import type { OAuthClient } from '../../shared/oauth/client-decider.js';

export function clientCommandContext(ctx: HttpContext, client: OAuthClient, now: Date): CommandContext {
  return {
    correlationId: ctx.state.requestId,
    causationId: null,
    actor: { kind: 'system', name: `oauth-client:${client.clientId}` },
    now,
  };
}
