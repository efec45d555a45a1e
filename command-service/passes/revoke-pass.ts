// Use case: revoke a pass (DELETE /api/v1/passes/{id}, DELETE /api/v1/org/passes/{id}).
// The pass list read model only locates the pass's stream; whether it may be revoked is decided
// on the stream itself, so a revoke racing another revoke gets 409, never a second PassRevoked.
// The same request sent again (the gateway passes a DELETE on to another instance when its
// connection to the first broke, with the same X-Request-Id) is answered as the first was: its
// PassRevoked carries the request id as its correlation id.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS, type PassListRow } from '../../shared/db/read-models.js';
import { guestInvitesDecider } from '../../shared/domain/guest-invites-decider.js';
import { isPassPublicId } from '../../shared/domain/pass-request.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';

export interface RevokePassInput {
  readonly orgId: number;
  readonly publicId: string;
  /** User-delegated revocation: only the user's own passes (others are 404). Omit for the organization. */
  readonly createdBy?: number;
}

export interface RevokePassResult {
  readonly publicId: string;
  readonly revoked: true;
  readonly position: Position;
}

export async function revokePass(
  deps: CommandDeps,
  { orgId, publicId, createdBy }: RevokePassInput,
  ctx: CommandContext,
): Promise<RevokePassResult> {
  // Another organization's pass, or another user's, is indistinguishable from no pass.
  const notFound = () => new NotFoundError('pass not found');
  if (!isPassPublicId(publicId)) throw notFound();
  const row: Pick<PassListRow, 'stream_name' | 'org_id' | 'created_by'> | undefined = await deps
    .db(READ_MODELS.passList)
    .where({ public_id: publicId })
    .first('stream_name', 'org_id', 'created_by');
  if (!row || Number(row.org_id) !== orgId) throw notFound();
  if (createdBy !== undefined && Number(row.created_by) !== createdBy) throw notFound();

  let position: Position;
  try {
    ({ position } = await deps.handler.handle(row.stream_name, guestInvitesDecider, { type: 'RevokePass', data: { publicId, orgId } }, ctx));
  } catch (error) {
    const earlier = error instanceof ConflictError ? await revocationOfThisRequest(deps, row.stream_name, publicId, ctx.correlationId) : null;
    if (earlier === null) throw error;
    position = earlier;
  }
  await deps.watermark.waitFor(position, deps.projectionWaitMs, [READ_MODELS.passList]);
  return { publicId, revoked: true, position };
}

/** Where this request's own PassRevoked of the pass is, when it made one. */
async function revocationOfThisRequest(deps: CommandDeps, streamName: string, publicId: string, correlationId: string): Promise<Position | null> {
  const events = await deps.store.readStream(streamName);
  const mine = events.find((e) => e.type === 'PassRevoked' && (e.data as { publicId?: unknown }).publicId === publicId && e.metadata.correlationId === correlationId);
  return mine ? mine.position : null;
}
