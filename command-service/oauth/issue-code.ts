// Issues an authorization code for a validated authorize request and a signed-in session: the
// authorize endpoint's last step. Returns the code to put in the redirect (only its hash is kept).
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { AuthorizeRequest } from '../../shared/oauth/authorize-request.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import type { CommandDeps } from '../command-deps.js';

export async function issueAuthorizationCode(
  _deps: CommandDeps,
  _input: { readonly request: AuthorizeRequest; readonly session: SignInSession },
  _ctx: CommandContext,
): Promise<{ readonly code: string }> {
  throw new Error('not built yet');
}
