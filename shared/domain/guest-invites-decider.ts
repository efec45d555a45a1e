// One user's guest invitations of one UTC month (stream `guest-invites-{userId}-{YYYY-MM}`).
// The stream is the consistency boundary of the monthly allowance: a batch is appended with the
// revision its quota was decided on, so concurrent batches cannot together exceed the limit. The
// same stream holds the lifecycle of those passes (revocation), so a pass's state and the
// allowance it consumed are never out of step. Revoked passes still count toward the month.
import type { Decider } from './decider.js';
import {
  ACTIVE_PASS_STATUSES,
  type PassCheckedIn,
  type PassCreated,
  type PassRegistered,
  type PassRevoked,
  type PassStatus,
  type Sealed,
} from './events.js';
import type { DoorAccessRecorded, PassCheckedOut } from './door-events.js';
import { ConflictError, NotFoundError, QuotaExceededError, ValidationError } from '../errors.js';
import { MAX_PASSES_PER_BATCH } from './pass-constants.js';


/**
 * PassCreated, PassRevoked and PassRegistered are decided here; the door path's events share the
 * stream (pass-check-in.ts).
 */
export type GuestInvitesEvent = PassCreated | PassRevoked | PassRegistered | PassCheckedIn | PassCheckedOut | DoorAccessRecorded;

export type GuestInvitesCommand =
  | {
      type: 'CreatePasses';
      data: {
        /** The inviting user's monthly allowance, resolved by the caller (user's own, else organization's). */
        limit: number;
        /** Fully prepared passes (ids, QR hashes, sealed guest): the decider only judges them. */
        passes: readonly PassCreated['data'][];
      };
    }
  | {
      type: 'RevokePass';
      data: {
        publicId: string;
        /** When given, the pass must belong to this organization (else 404). */
        orgId?: number;
      };
    }
  | {
      /** The guest confirmed the visit on the batch's pass page. */
      type: 'RegisterGuest';
      data: {
        batchId: string;
        /** GuestRegistration sealed under the batch's key by the caller. */
        registration: Sealed;
        termsAccepted: boolean;
        now: string;
      };
    };

export interface InvitedPass {
  readonly passId: number;
  readonly status: PassStatus;
  readonly facilityId: number;
  readonly orgId: number;
  readonly qrHash: string;
  readonly batchId: string;
  /** ISO 8601 UTC: the end of the pass's window. */
  readonly validUntil: string;
}

export interface GuestInvitesState {
  /** Passes created this month, revoked ones included. */
  readonly used: number;
  readonly passes: PassIndex;
}

const FANOUT_BITS = 6;
const FANOUT = 1 << FANOUT_BITS;
const MASK = FANOUT - 1;
type Leaf = ReadonlyMap<string, InvitedPass>;
type Branch = readonly (Leaf | undefined)[];

/**
 * Immutable map publicId -> pass with cheap updates. A plain Map copied on every event makes a
 * fold O(n^2), which hurts when a busy organization key fills one admin's month with thousands of
 * passes and a process loads the stream cold. This two-level hash trie (64 x 64 buckets) copies
 * two small arrays and one bucket per update, and shares everything else with the previous state.
 */
export class PassIndex {
  static readonly empty = new PassIndex(new Array<Branch | undefined>(FANOUT).fill(undefined), 0);

  private constructor(
    private readonly root: readonly (Branch | undefined)[],
    readonly size: number,
  ) {}

  get(publicId: string): InvitedPass | undefined {
    const h = hash(publicId);
    return this.root[h & MASK]?.[(h >>> FANOUT_BITS) & MASK]?.get(publicId);
  }

  has(publicId: string): boolean {
    return this.get(publicId) !== undefined;
  }

  set(publicId: string, pass: InvitedPass): PassIndex {
    const h = hash(publicId);
    const i = h & MASK;
    const j = (h >>> FANOUT_BITS) & MASK;
    const branch = this.root[i] ?? new Array<Leaf | undefined>(FANOUT).fill(undefined);
    const leaf = new Map(branch[j] ?? []);
    const added = !leaf.has(publicId);
    leaf.set(publicId, pass);
    const nextBranch = branch.slice();
    nextBranch[j] = leaf;
    const nextRoot = this.root.slice();
    nextRoot[i] = nextBranch;
    return new PassIndex(nextRoot, this.size + (added ? 1 : 0));
  }

  *entries(): IterableIterator<[string, InvitedPass]> {
    for (const branch of this.root) for (const leaf of branch ?? []) if (leaf) yield* leaf;
  }
}

/** FNV-1a, 32 bits: public ids are random, so any fast spreading hash will do. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) {
    h ^= text.charCodeAt(k);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function decideCreatePasses(
  { limit, passes }: Extract<GuestInvitesCommand, { type: 'CreatePasses' }>['data'],
  state: GuestInvitesState,
): PassCreated[] {
  if (passes.length < 1 || passes.length > MAX_PASSES_PER_BATCH) {
    throw new ValidationError(`quantity must be between 1 and ${MAX_PASSES_PER_BATCH}`);
  }
  if (!Number.isSafeInteger(limit) || limit < 0) throw new ValidationError('invite allowance must be a whole number');
  const ids = new Set(passes.map((p) => p.publicId));
  if (ids.size !== passes.length || passes.some((p) => state.passes.has(p.publicId))) {
    // Ids derive from the request id (create-passes.ts): the same request again, or a mis-built command.
    throw new ConflictError('a pass with this public id already exists');
  }
  // All or nothing: a batch that does not fit entirely creates nothing.
  if (state.used + passes.length > limit) throw new QuotaExceededError(limit, state.used, passes.length);
  return passes.map((data) => ({ type: 'PassCreated', data }));
}

function decideRevokePass(
  { publicId, orgId }: Extract<GuestInvitesCommand, { type: 'RevokePass' }>['data'],
  state: GuestInvitesState,
): PassRevoked[] {
  const pass = state.passes.get(publicId);
  if (!pass || (orgId !== undefined && pass.orgId !== orgId)) throw new NotFoundError('pass not found');
  if (!ACTIVE_PASS_STATUSES.includes(pass.status)) throw new ConflictError('pass is no longer active');
  return [
    {
      type: 'PassRevoked',
      data: { passId: pass.passId, publicId, orgId: pass.orgId, facilityId: pass.facilityId, qrHash: pass.qrHash },
    },
  ];
}

/**
 * Moves the batch's `expected` passes to `registered`. Idempotent: a batch already registered
 * records nothing. Refused (409) when no pass of the batch is active and within its window.
 */
function decideRegisterGuest(
  { batchId, registration, termsAccepted, now }: Extract<GuestInvitesCommand, { type: 'RegisterGuest' }>['data'],
  state: GuestInvitesState,
): PassRegistered[] {
  const batch = [...state.passes.entries()].filter(([, p]) => p.batchId === batchId);
  if (batch.length === 0) throw new NotFoundError('pass not found');
  const open = batch.filter(([, p]) => ACTIVE_PASS_STATUSES.includes(p.status) && p.validUntil > now);
  if (open.length === 0) throw new ConflictError('the passes of this invitation are no longer active');
  return open
    .filter(([, p]) => p.status === 'expected')
    .map(([publicId, p]) => ({
      type: 'PassRegistered',
      data: { passId: p.passId, publicId, orgId: p.orgId, facilityId: p.facilityId, batchId, registration, termsAccepted },
    }));
}

export const guestInvitesDecider: Decider<GuestInvitesCommand, GuestInvitesEvent, GuestInvitesState> = {
  initialState: () => ({ used: 0, passes: PassIndex.empty }),

  evolve(state, event) {
    switch (event.type) {
      case 'PassCreated': {
        const { publicId, passId, facilityId, orgId, qrHash, batchId, validUntil } = event.data;
        return {
          used: state.used + 1,
          // A new pass is `expected`; the guest's confirmation on the pass page makes it `registered`.
          passes: state.passes.set(publicId, { passId, status: 'expected', facilityId, orgId, qrHash, batchId, validUntil }),
        };
      }
      case 'PassRevoked': {
        const pass = state.passes.get(event.data.publicId);
        if (!pass) return state;
        return { ...state, passes: state.passes.set(event.data.publicId, { ...pass, status: 'cancelled' }) };
      }
      case 'PassRegistered': {
        const pass = state.passes.get(event.data.publicId);
        if (!pass || pass.status !== 'expected') return state;
        return { ...state, passes: state.passes.set(event.data.publicId, { ...pass, status: 'registered' }) };
      }
      case 'PassCheckedOut': {
        const pass = state.passes.get(event.data.publicId);
        if (!pass || pass.status !== 'checked_in') return state;
        return { ...state, passes: state.passes.set(event.data.publicId, { ...pass, status: 'checked_out' }) };
      }
      case 'PassCheckedIn': {
        // The first granted entry: the pass is no longer active, so revoking it is a 409.
        const pass = state.passes.get(event.data.publicId);
        if (!pass || pass.status === 'cancelled') return state;
        return { ...state, passes: state.passes.set(event.data.publicId, { ...pass, status: 'checked_in' }) };
      }
      default:
        // Facts this decider has no use for (the door access records) leave its state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreatePasses':
        return decideCreatePasses(command.data, state);
      case 'RevokePass':
        return decideRevokePass(command.data, state);
      case 'RegisterGuest':
        return decideRegisterGuest(command.data, state);
    }
  },
};
