// Use case: the guest confirms the visit on the pass page. What they entered is sealed under the
// batch's key (erasing the guest erases it too) and the batch's `expected` passes become
// `registered` through the guest-invites decider, on the stream that holds them. Idempotent: a
// batch already confirmed records nothing. A batch with no usable pass left is a ConflictError.
// Facilities have no visitor terms yet, so none are accepted.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import type { GuestRegistration } from '../../shared/domain/events.js';
import { guestInvitesDecider } from '../../shared/domain/guest-invites-decider.js';
import { seal } from '../../shared/crypto/sealed-box.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import type { PassBatch } from './load-pass-batch.js';

export interface RegisterGuestResult {
  /** Passes moved to `registered` by this call (0 when the batch was already confirmed). */
  readonly registered: number;
  readonly position: Position;
}

export async function registerGuest(
  deps: CommandDeps,
  batch: Pick<PassBatch, 'batchId' | 'streamName' | 'key'>,
  registration: GuestRegistration,
  ctx: CommandContext,
): Promise<RegisterGuestResult> {
  const result = await deps.handler.handle(
    batch.streamName,
    guestInvitesDecider,
    {
      type: 'RegisterGuest',
      data: { batchId: batch.batchId, registration: seal(batch.key, registration), termsAccepted: false, now: ctx.now.toISOString() },
    },
    ctx,
  );
  // Read-your-writes: the page the guest is sent back to shows the new status.
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.passList]);
  return { registered: result.events.length, position: result.position };
}
