// Use case: revoke a pass (DELETE /api/v1/passes/{id}, DELETE /api/v1/org/passes/{id}).
// The pass list read model only locates the pass's stream; whether it may be revoked is decided
// on the stream itself, so a revoke racing another revoke gets 409, never a second PassRevoked.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS, type PassListRow } from '../../shared/db/read-models.js';
import { guestInvitesDecider } from '../../shared/domain/guest-invites-decider.js';
import { isPassPublicId } from '../../shared/domain/pass-request.js';
import { NotFoundError } from '../../shared/errors.js';

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

  const result = await deps.handler.handle(
    row.stream_name,
    guestInvitesDecider,
    { type: 'RevokePass', data: { publicId, orgId } },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.passList]);
  return { publicId, revoked: true, position: result.position };
}
