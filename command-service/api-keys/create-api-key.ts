// Use case: create an organization API key (CLI `apikey create`, demo bootstrap). The key is
// `svc_sk_` + 256 random bits, returned exactly once; the event keeps only its SHA-256. The key
// acts for an admin of the organization: passes it creates are attributed to and counted against
// that admin.
import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, hashApiKey } from '../../shared/auth/api-key-auth.js';
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { apiKeyDecider } from '../../shared/domain/api-key-decider.js';
import { hasRole, userDecider, userInOrg } from '../../shared/domain/user-decider.js';
import { parseIsoInstant } from '../../shared/domain/iso-time.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';


export interface CreateApiKeyInput {
  readonly orgId: number;
  /** The admin the key acts for. */
  readonly userId: number;
  readonly scopes: readonly string[];
  /**
   * Optional expiry. A string is ISO 8601; without `Z` or an offset it is read as UTC, and a date
   * alone means 00:00 UTC of that day.
   */
  readonly expiresAt?: string | Date | null;
  /** CIDR ranges or single addresses; empty or omitted allows any source. */
  readonly allowedIps?: readonly string[];
  /** What the admin calls the key (1 to 100 characters); the console requires one, the CLI not. */
  readonly name?: string | null;
}

export interface CreateApiKeyResult {
  readonly keyId: string;
  /** The secret key: show it once, never store or log it. */
  readonly apiKey: string;
  readonly position: Position;
}

function expiryInstant(expiresAt: string | Date | null | undefined): string | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  if (expiresAt instanceof Date) {
    if (Number.isNaN(expiresAt.getTime())) throw new ValidationError('expiry is not a valid date');
    return expiresAt.toISOString();
  }
  const parsed = parseIsoInstant(expiresAt.trim());
  if (!parsed) throw new ValidationError(`expiry "${expiresAt}" is not an ISO 8601 date or date-time`);
  return new Date(parsed.time).toISOString();
}

export async function createApiKey(deps: CommandDeps, input: CreateApiKeyInput, ctx: CommandContext): Promise<CreateApiKeyResult> {
  const { state } = await deps.handler.load(streams.user(input.userId), userDecider);
  const owner = userInOrg(state, input.userId, input.orgId);
  if (!hasRole(owner, 'admin')) {
    throw new ConflictError(`user ${input.userId} is not an admin of organization ${input.orgId}; only an admin can own an API key`);
  }

  const keyId = `key_${randomBytes(12).toString('hex')}`;
  const apiKey = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const keyHash = hashApiKey(apiKey);
  const result = await deps.handler.handle(
    streams.apiKey(keyId),
    apiKeyDecider,
    {
      type: 'CreateApiKey',
      data: {
        keyId,
        orgId: input.orgId,
        userId: input.userId,
        keyHash,
        scopes: input.scopes,
        expiresAt: expiryInstant(input.expiresAt),
        allowedIps: input.allowedIps ?? [],
        name: input.name ?? null,
        now: ctx.now.toISOString(),
      },
    },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.apiKeys]);
  return { keyId, apiKey, position: result.position };
}
