// Use case: create a batch of 1 to 10 guest passes for one guest, counted against the inviting
// user's monthly allowance all-or-nothing. Used by POST /api/v1/passes, POST /api/v1/org/passes
// and the CLI. The caller has already parsed the body (parseCreatePassRequest); the validity window
// is resolved here, in the facility's time zone, once the facility is loaded.
//
// Everything random is drawn here, so the decider stays pure: pass ids, QR values, the batch id
// and the batch's subject key. The allowance is enforced by the single append on the
// guest-invites stream of (user, current UTC month) with the revision it was decided on.
//
// A create is idempotent by its request id: the public ids derive from it (passPublicId), so the
// same request arriving again (the gateway sends a create to the other instance when its
// connection broke: deploy/gateway.nginx.conf) finds its passes in the stream and answers the
// batch the first one made (batchOfThisRequest); one racing the first is refused by the decider on
// the ids, and then answers the same.
import { createHash, randomBytes } from 'node:crypto';
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext, HandleResult } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { monthOf, streams, type GuestDetails, type PassCreated } from '../../shared/domain/events.js';
import { assertFacilityAcceptsPasses, facilityDecider } from '../../shared/domain/facility-decider.js';
import { guestInvitesDecider, type GuestInvitesEvent } from '../../shared/domain/guest-invites-decider.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { userDecider, userInOrg } from '../../shared/domain/user-decider.js';
import { resolvePassWindow, type CreatePassInput, type CreatePassRequest } from '../../shared/domain/pass-request.js';
import { DEFAULT_TIME_ZONE } from '../../shared/domain/time-zone.js';
import { open, seal } from '../../shared/crypto/sealed-box.js';
import { ConflictError, DomainError, NotFoundError, QuotaExceededError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

export interface CreatePassesInput {
  readonly orgId: number;
  /** The inviting user; for an organization API key, the admin who created the key. */
  readonly userId: number;
  /** Parsed; a window it already carries (CreatePassInput) is resolved again in the facility's zone. */
  readonly request: CreatePassRequest;
}

export interface IssuedPass {
  readonly passId: number;
  readonly publicId: string;
  /** The door credential: returned to the caller once, stored only sealed and as a hash. */
  readonly qrValue: string;
}

export interface CreatePassesResult {
  /** In creation order. */
  readonly passes: readonly IssuedPass[];
  readonly batchId: string;
  /** The batch's pass page token (`/p/{token}`): returned and sent to the guest, stored only sealed and hashed. */
  readonly passLinkToken: string;
  readonly position: Position;
  /** This request had made the batch before (it arrived again): nothing new was created. */
  readonly repeated: boolean;
}

/**
 * `gst_` + 128 bits of SHA-256 over the guest-invites stream, the request id and the pass's place
 * in the batch, lowercase hex (PASS_PUBLIC_ID_PATTERN). One request always makes the same ids;
 * different requests' ids differ as random ones do (the gateway's request ids are 128 random bits,
 * and the stream names the user and the month). A public id is a name, never a credential: the
 * QR value and the pass page's token stay random.
 */
export function passPublicId(stream: string, requestId: string, index: number): string {
  const digest = createHash('sha256').update(`guest-pass-public-id\0${stream}\0${requestId}\0${index}`, 'utf8').digest('hex');
  return `gst_${digest.slice(0, 32)}`;
}

/** 256 random bits: unguessable, and short enough for a QR code. */
function newQrValue(): string {
  return randomBytes(32).toString('base64url');
}

/** 192 random bits: the pass page's capability, distinct from every QR value. */
function newPassLinkToken(): string {
  return randomBytes(24).toString('base64url');
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The user's own allowance, else the organization's default. */
async function monthlyAllowance(deps: CommandDeps, orgId: number, userId: number): Promise<number> {
  const [user, organization] = await Promise.all([
    deps.handler.load(streams.user(userId), userDecider),
    deps.handler.load(streams.organization(orgId), organizationDecider),
  ]);
  const inviter = userInOrg(user.state, userId, orgId);
  if (inviter.inviteAllowance !== null) return inviter.inviteAllowance;
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${orgId} not found`);
  return organization.state.inviteAllowance;
}

export interface CreatePassesHooks {
  /** Told the batch's id before its passes are appended (a delivery watch starts there). */
  readonly beforeAppend?: (batchId: string) => void;
}

export async function createPasses(
  deps: CommandDeps,
  { orgId, userId, request: parsed }: CreatePassesInput,
  ctx: CommandContext,
  hooks: CreatePassesHooks = {},
): Promise<CreatePassesResult> {
  const stream = streams.guestInvites(userId, monthOf(ctx.now));
  // One key per batch (the batch is one guest, erased as a whole); the batch's id is the key's
  // subject, chosen by the store so that it can keep keys ready ahead.
  const newKey = deps.subjectKeys.createForNewSubject();
  // The reads and the draws of ids and a key are independent round trips: run them together.
  // A refused request then leaves a gap in the pass ids (allowed) and drops its unused key.
  const [facility, limit, month, passIds, key] = await Promise.all([
    deps.handler.load(streams.facility(parsed.facilityId), facilityDecider),
    monthlyAllowance(deps, orgId, userId),
    deps.handler.load(stream, guestInvitesDecider),
    deps.ids.next('pass', parsed.quantity),
    newKey,
  ]).catch(async (error: unknown) => {
    await newKey.then((k) => deps.subjectKeys.destroy(k.subjectId)).catch(() => undefined);
    throw error;
  });
  const batchId = key.subjectId;
  const publicIds = passIds.map((_, i) => passPublicId(stream, ctx.correlationId, i));
  // The same request again, after it made its batch: answered with that batch, whatever changed
  // since (the month filled up, the facility was suspended).
  if (publicIds.some((id) => month.state.passes.has(id))) {
    await deps.subjectKeys.destroy(batchId).catch(() => undefined);
    const earlier = await batchOfThisRequest(deps, stream, publicIds, parsed);
    if (earlier) return answerRepeat(deps, earlier);
    throw new ConflictError('a pass with this public id already exists');
  }
  let request: CreatePassInput;
  try {
    // 400 before 404, as when the window was resolved in UTC while parsing: another organization's
    // facility lends no zone (its 404 must not depend on it).
    const state = facility.state;
    const zone = state.status !== 'absent' && state.orgId === orgId ? state.timeZone : DEFAULT_TIME_ZONE;
    request = resolvePassWindow(parsed, zone, ctx.now);
    // 404 / 409. A suspension racing this request may still let it through: the facility is its
    // own stream, and only the allowance is an invariant the spec asks to hold under concurrency.
    assertFacilityAcceptsPasses(facility.state, request.facilityId, orgId);
    // Fail before sealing when the month is already full. This is not the enforcement (the state
    // may be stale): the decider decides again on the revision it appends at.
    if (month.state.used + request.quantity > limit) throw new QuotaExceededError(limit, month.state.used, request.quantity);
  } catch (error) {
    await deps.subjectKeys.destroy(batchId).catch(() => undefined);
    throw error;
  }

  const issued: IssuedPass[] = passIds.map((passId, i) => ({ passId, publicId: publicIds[i]!, qrValue: newQrValue() }));
  const passLinkToken = newPassLinkToken();
  const guest: GuestDetails = {
    firstName: request.firstName,
    lastName: request.lastName,
    email: request.email,
    phone: request.phone,
    country: request.country,
    vehicleNumber: request.vehicleNumber,
    notes: request.notes,
    invitedBy: request.invitedBy,
    qrValues: Object.fromEntries(issued.map((p) => [p.publicId, p.qrValue])),
    passLinkToken,
  };

  let result: HandleResult<GuestInvitesEvent>;
  try {
    const sealed = seal(key, guest);
    const passes: PassCreated['data'][] = issued.map((p) => ({
      passId: p.passId,
      publicId: p.publicId,
      orgId,
      facilityId: request.facilityId,
      createdBy: userId,
      batchId,
      batchSize: issued.length,
      arrivalDate: request.arrivalDate,
      arrivalTime: request.arrivalTime,
      validFrom: request.validFrom,
      validUntil: request.validUntil,
      qrHash: sha256Hex(p.qrValue),
      guest: sealed,
      passLinkHash: sha256Hex(passLinkToken),
    }));
    hooks.beforeAppend?.(batchId);
    result = await deps.handler.handle(stream, guestInvitesDecider, { type: 'CreatePasses', data: { limit, passes } }, ctx);
  } catch (error) {
    // A rejected batch (quota, conflict) appended nothing, so its key seals nothing: drop it.
    // On any other failure the append may have committed, and the key must stay.
    if (error instanceof DomainError) await deps.subjectKeys.destroy(batchId).catch(() => undefined);
    // A repeat that raced the first (both decided before either appended).
    const earlier = error instanceof ConflictError ? await batchOfThisRequest(deps, stream, publicIds, request) : null;
    if (earlier === null) throw error;
    return answerRepeat(deps, earlier);
  }

  await waitForListings(deps, result.position);
  return { passes: issued, batchId, passLinkToken, position: result.position, repeated: false };
}

function waitForListings(deps: CommandDeps, position: Position): Promise<boolean> {
  return deps.watermark.waitFor(position, deps.projectionWaitMs, [READ_MODELS.passList, READ_MODELS.passBatches, READ_MODELS.organizations, READ_MODELS.inviteAllowanceUsage]);
}

async function answerRepeat(deps: CommandDeps, earlier: CreatePassesResult): Promise<CreatePassesResult> {
  await waitForListings(deps, earlier.position);
  return earlier;
}

/**
 * The batch this same request made before, answered as it was then (the QR values and the pass
 * page's token from its sealed guest details); null when the stream holds no such batch. The same
 * request id with another guest or facility is refused: a request id names one request.
 */
async function batchOfThisRequest(deps: CommandDeps, stream: string, publicIds: readonly string[], request: CreatePassRequest): Promise<CreatePassesResult | null> {
  const ids = new Set(publicIds);
  const events = (await deps.store.readStream(stream)).filter((e) => e.type === 'PassCreated' && ids.has((e.data as PassCreated['data']).publicId));
  const created = events.map((e) => e.data as PassCreated['data']);
  const first = created[0];
  if (!first) return null;
  const key = (await deps.subjectKeys.getMany([first.guest.keyId])).get(first.guest.keyId);
  // The guest was erased since: there is nothing left to answer with.
  if (!key) throw new ConflictError('this request was already made, and its guest has since been erased');
  const guest = open<GuestDetails>(key, first.guest);
  const { passLinkToken } = guest;
  // Every batch made with these ids carries its token (older batches' ids are random).
  if (passLinkToken === undefined) return null;
  const same =
    created.length === request.quantity &&
    first.facilityId === request.facilityId &&
    (['firstName', 'lastName', 'email', 'phone', 'country', 'vehicleNumber', 'notes', 'invitedBy'] as const).every((field) => guest[field] === request[field]);
  if (!same) throw new ConflictError('this request id was already used for another pass request');
  return {
    passes: created.map((p) => ({ passId: p.passId, publicId: p.publicId, qrValue: guest.qrValues[p.publicId]! })),
    batchId: first.batchId,
    passLinkToken,
    position: events[events.length - 1]!.position,
    repeated: true,
  };
}
