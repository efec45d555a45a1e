// Use case: give a confidential OAuth client a new secret (the console's "Rotate secret"). The new
// secret is generated here and returned once; only its SHA-256 reaches the event, and the old one
// stops authenticating once the client registry has the rotation, which this call waits for.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { NotFoundError } from '../../shared/errors.js';
import { isClientId, oauthClientDecider } from '../../shared/oauth/client-decider.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { newClientSecret } from '../../shared/oauth/opaque-credentials.js';

export async function rotateClientSecret(
  deps: CommandDeps,
  input: { readonly orgId: number; readonly clientId: string },
  ctx: CommandContext,
): Promise<{ clientSecret: string; position: Position }> {
  if (!isClientId(input.clientId)) throw new NotFoundError(`client ${input.clientId} not found`);
  const secret = newClientSecret();
  const result = await deps.handler.handle(
    oauthStreams.clients(input.orgId),
    oauthClientDecider,
    { type: 'RotateOAuthClientSecret', data: { orgId: input.orgId, clientId: input.clientId, secretHash: secret.hash } },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.oauthClients]);
  return { clientSecret: secret.value, position: result.position };
}
