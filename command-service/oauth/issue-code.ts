// Issues an authorization code for a validated authorize request and a signed-in session: the
// authorize endpoint's last step. Returns the code to put in the redirect (only its hash is kept).
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { AuthorizeRequest } from '../../shared/oauth/authorize-request.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import { authorizationCodeDecider } from '../../shared/oauth/authorization-code-decider.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { newAuthorizationCode, newFamilyId } from '../../shared/oauth/opaque-credentials.js';
import type { CommandDeps } from '../command-deps.js';

export async function issueAuthorizationCode(
  deps: CommandDeps,
  input: { readonly request: AuthorizeRequest; readonly session: SignInSession },
  ctx: CommandContext,
): Promise<{ readonly code: string }> {
  const { request, session } = input;
  const code = newAuthorizationCode();
  // The family is named now so that a replayed code can revoke whatever its first redemption opened.
  const familyId = newFamilyId();
  await deps.handler.handle(
    oauthStreams.authorizationCode(code.hash),
    authorizationCodeDecider,
    {
      type: 'IssueAuthorizationCode',
      data: {
        codeHash: code.hash,
        familyId,
        clientId: request.client.clientId,
        orgId: session.orgId,
        userId: session.userId,
        scopes: [...request.scopes],
        authTime: session.authTime,
        amr: [...session.amr],
        sid: session.sid,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        nonce: request.nonce,
        now: ctx.now.toISOString(),
      },
    },
    ctx,
  );
  return { code: code.value };
}
