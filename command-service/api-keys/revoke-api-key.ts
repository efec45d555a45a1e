// Use case: revoke an organization API key (CLI `apikey revoke`). Final; revoking twice is a
// no-op. The key stops authenticating once the api_keys read model has the revocation, which
// this call waits for.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { apiKeyDecider } from '../../shared/domain/api-key-decider.js';
import { NotFoundError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

/** Key ids are `key_` + hex; anything else cannot name a key (and must not become a stream name). */
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface RevokeApiKeyInput {
  readonly keyId: string;
  /** When given, a key of another organization is 404. */
  readonly orgId?: number;
}

/** `revoked` is false when the key had already been revoked (nothing was recorded). */

export async function revokeApiKey(
  deps: CommandDeps,
  { keyId, orgId }: RevokeApiKeyInput,
  ctx: CommandContext,
): Promise<{ revoked: boolean; position: Position }> {
  if (!KEY_ID.test(keyId)) throw new NotFoundError(`API key ${keyId} not found`);
  const result = await deps.handler.handle(streams.apiKey(keyId), apiKeyDecider, { type: 'RevokeApiKey', data: { keyId, orgId } }, ctx);
  const revoked = result.events.length > 0;
  if (revoked) await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.apiKeys]);
  return { revoked, position: result.position };
}
