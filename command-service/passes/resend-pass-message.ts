// Use case: send the guest's message again, with the same link (the console's "Resend message").
// The read models only locate the batch and say whether anything should be sent for it (its own
// host's, still valid, not every pass revoked, an address to send to); the 10-minute rule is
// decided on the batch's delivery stream with its expected revision (pass-delivery-decider.ts),
// so of any number of concurrent requests exactly one is recorded. The delivery worker does the
// sending: the work list takes the batch back when the projection runner sees the request.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS, type PassBatchRow } from '../../shared/db/read-models.js';
import { streams } from '../../shared/domain/events.js';
import { passDeliveryDecider } from '../../shared/domain/pass-delivery-decider.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';

export interface ResendPassMessageInput {
  readonly orgId: number;
  readonly batchId: string;
  /** The signed-in host: only the batch's creator may resend (another's batch is 404). */
  readonly requestedBy: number;
}

export async function resendPassMessage(deps: CommandDeps, { orgId, batchId, requestedBy }: ResendPassMessageInput, ctx: CommandContext): Promise<{ position: Position }> {
  const batch: Pick<PassBatchRow, 'org_id' | 'created_by' | 'link_hash' | 'valid_until' | 'email_delivery' | 'sms_delivery'> | undefined = await deps
    .db(READ_MODELS.passBatches)
    .where({ batch_id: batchId })
    .first('org_id', 'created_by', 'link_hash', 'valid_until', 'email_delivery', 'sms_delivery');
  // Another organization's batch, or another host's, is indistinguishable from none.
  if (!batch || Number(batch.org_id) !== orgId || Number(batch.created_by) !== requestedBy) throw new NotFoundError('pass not found');
  if (batch.link_hash === null || (batch.email_delivery === null && batch.sms_delivery === null)) throw new ConflictError('the guest has no message to resend');
  if (new Date(batch.valid_until).getTime() <= ctx.now.getTime()) throw new ConflictError('the pass has expired');
  const live = await deps.db(READ_MODELS.passList).where({ batch_id: batchId }).whereNot({ status: 'cancelled' }).first('public_id');
  if (!live) throw new ConflictError('the pass was revoked');

  const { position } = await deps.handler.handle(
    streams.passDelivery(batchId),
    passDeliveryDecider,
    { type: 'ResendPassMessage', data: { batchId, orgId, requestedBy, now: ctx.now } },
    ctx,
  );
  return { position };
}
