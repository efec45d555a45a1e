// The door path's deciders: recording a scan, checking a pass in on its first granted entry and
// out on a granted scan at an exit reader. Pure (no I/O), tested given/when/then in
// test/door/pass-check-in.unit.spec.ts.
//
// * `passDoorAccessDecider` is the door path's own decider over a pass's guest-invites stream
//   (`guest-invites-{userId}-{YYYY-MM}`): it folds PassCreated/PassRegistered/PassRevoked/
//   PassCheckedIn/PassCheckedOut/DoorAccessRecorded into a door view of each pass and decides
//   `RecordDoorAccess`. The stream's other decider, guest-invites-decider.ts (passes and the
//   monthly allowance), folds the same events into its own state (PassCheckedIn -> `checked_in`,
//   so revoking a checked-in pass is a 409) and ignores DoorAccessRecorded. The two never share
//   folded state: the command handler keys its cached state by decider (by its evolve) and
//   queues commands per stream, batching only those of one decider, so each decides on its own
//   fold of the current revision (another process, e.g. the door-gateway's reactor, is held off
//   by the expected revision).
// * `doorAccessLogDecider` owns `door-access-{facilityId}-{YYYY-MM-DD}`
//   (`streams.doorAccessLog`): scans that matched no pass, deduplicated by access id.
import type { Decider } from './decider.js';
import type { PassCreated, PassRegistered, PassRevoked, PassStatus } from './events.js';
import { ACTIVE_PASS_STATUSES } from './events.js';
import type {
  DoorAccessDirection,
  DoorAccessRecorded,
  DoorAccessResult,
  DoorDenialReason,
  PassCheckedIn,
  PassCheckedOut,
} from './door-events.js';

export type RecordDoorAccess = {
  type: 'RecordDoorAccess';
  data: {
    accessId: string;
    facilityId: number;
    controllerId: string;
    door: string;
    /** `exit` for a controller that reports itself as an exit reader; `entry` otherwise. */
    direction: DoorAccessDirection;
    result: DoorAccessResult;
    reason: DoorDenialReason | null;
    /** The pass the controller matched (its public id is the credential id); null for an unknown QR. */
    publicId: string | null;
    passId: number | null;
    scannedAt: string;
    receivedAt: string;
  };
};

/** What the door path needs to know about one pass. */
export interface PassDoorView {
  readonly passId: number;
  readonly orgId: number;
  readonly facilityId: number;
  readonly status: PassStatus;
  /** Access ids already recorded for this pass (the newest RECENT_ACCESS_IDS): redeliveries change nothing. */
  readonly recentAccessIds: readonly string[];
}

/** Scans per pass remembered for dedupe: far more than a guest makes, and redeliveries come soon. */
export const RECENT_ACCESS_IDS = 200;

export function rememberAccess(view: PassDoorView, accessId: string): PassDoorView {
  const ids = [...view.recentAccessIds, accessId.toLowerCase()];
  return { ...view, recentAccessIds: ids.length > RECENT_ACCESS_IDS ? ids.slice(-RECENT_ACCESS_IDS) : ids };
}

/**
 * The events recording one scan of a known pass. Nothing for a scan already recorded. At the
 * pass's own facility, a granted entry of an active pass (expected or registered) also checks it
 * in, and a granted exit of a checked-in pass checks it out. Any other scan is only recorded for
 * auditors: a granted entry of a cancelled or checked-out pass (the withdrawal had not reached
 * that door yet), an exit of a pass that never checked in, a denied scan.
 */
export function decideRecordDoorAccess(
  command: RecordDoorAccess['data'],
  pass: PassDoorView,
  publicId: string,
): Array<DoorAccessRecorded | PassCheckedIn | PassCheckedOut> {
  const accessId = command.accessId.toLowerCase();
  if (pass.recentAccessIds.includes(accessId)) return [];
  const recorded: DoorAccessRecorded = {
    type: 'DoorAccessRecorded',
    data: {
      accessId,
      facilityId: command.facilityId,
      orgId: pass.orgId,
      controllerId: command.controllerId,
      door: command.door,
      direction: command.direction,
      result: command.result,
      reason: command.result === 'granted' ? null : command.reason,
      passId: pass.passId,
      publicId,
      scannedAt: command.scannedAt,
      receivedAt: command.receivedAt,
    },
  };
  if (command.result !== 'granted' || command.facilityId !== pass.facilityId) return [recorded];
  // The scan that moved the pass on, as PassCheckedIn and PassCheckedOut name it.
  const scan = {
    passId: pass.passId,
    publicId,
    orgId: pass.orgId,
    facilityId: pass.facilityId,
    accessId,
    controllerId: command.controllerId,
    door: command.door,
  };
  if (command.direction === 'entry' && ACTIVE_PASS_STATUSES.includes(pass.status)) {
    return [recorded, { type: 'PassCheckedIn', data: { ...scan, checkedInAt: command.scannedAt } }];
  }
  if (command.direction === 'exit' && pass.status === 'checked_in') {
    return [recorded, { type: 'PassCheckedOut', data: { ...scan, checkedOutAt: command.scannedAt } }];
  }
  return [recorded];
}

/** How the pass lifecycle events the door path takes part in change a pass's door view. */
export function evolvePassDoorView(
  view: PassDoorView,
  event: PassRegistered | PassCheckedIn | PassCheckedOut | DoorAccessRecorded,
): PassDoorView {
  switch (event.type) {
    case 'PassRegistered':
      // The guest confirmed the visit: still active, still opens the doors (only from `expected`).
      return view.status === 'expected' ? { ...view, status: 'registered' } : view;
    case 'PassCheckedIn':
      return view.status === 'cancelled' ? view : { ...view, status: 'checked_in' };
    case 'PassCheckedOut':
      return view.status === 'checked_in' ? { ...view, status: 'checked_out' } : view;
    case 'DoorAccessRecorded':
      return rememberAccess(view, event.data.accessId);
  }
}

// ---------------------------------------------------------------------------------------------
// The deciders

/**
 * An immutable map with cheap updates: 64 buckets, an update copies the bucket array and one
 * bucket. Folding a stream of n events is then O(n^2 / 64) rather than O(n^2).
 */
export class BucketMap<V> {
  static empty<V>(): BucketMap<V> {
    return new BucketMap<V>(new Array<ReadonlyMap<string, V> | undefined>(64).fill(undefined));
  }

  private constructor(private readonly buckets: ReadonlyArray<ReadonlyMap<string, V> | undefined>) {}

  get(key: string): V | undefined {
    return this.buckets[bucketOf(key)]?.get(key);
  }

  set(key: string, value: V): BucketMap<V> {
    const i = bucketOf(key);
    const bucket = new Map(this.buckets[i] ?? []);
    bucket.set(key, value);
    const buckets = this.buckets.slice();
    buckets[i] = bucket;
    return new BucketMap(buckets);
  }
}

function bucketOf(key: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < key.length; k++) h = Math.imul(h ^ key.charCodeAt(k), 0x01000193);
  return (h >>> 0) & 63;
}

export type PassDoorEvent = PassCreated | PassRegistered | PassRevoked | PassCheckedIn | PassCheckedOut | DoorAccessRecorded;

export interface PassDoorState {
  readonly passes: BucketMap<PassDoorView>;
}

export class UnknownPassError extends Error {
  override readonly name = 'UnknownPassError';
}

/** Folds a guest-invites stream for door access only; `decide` throws UnknownPassError when the pass is not there. */
export const passDoorAccessDecider: Decider<RecordDoorAccess, PassDoorEvent, PassDoorState> = {
  initialState: () => ({ passes: BucketMap.empty() }),

  evolve(state, event) {
    switch (event.type) {
      case 'PassCreated': {
        const { publicId, passId, orgId, facilityId } = event.data;
        return { passes: state.passes.set(publicId, { passId, orgId, facilityId, status: 'expected', recentAccessIds: [] }) };
      }
      case 'PassRevoked': {
        const view = state.passes.get(event.data.publicId);
        return view ? { passes: state.passes.set(event.data.publicId, { ...view, status: 'cancelled' }) } : state;
      }
      case 'PassRegistered':
      case 'PassCheckedIn':
      case 'PassCheckedOut':
      case 'DoorAccessRecorded': {
        const publicId = event.data.publicId;
        const view = publicId ? state.passes.get(publicId) : undefined;
        return view && publicId ? { passes: state.passes.set(publicId, evolvePassDoorView(view, event)) } : state;
      }
      default:
        return state; // other events of the stream do not concern the doors
    }
  },

  decide(command, state) {
    const publicId = command.data.publicId;
    const pass = publicId ? state.passes.get(publicId) : undefined;
    if (!pass || !publicId) throw new UnknownPassError(`pass ${publicId ?? '(none)'} is not in this stream`);
    return decideRecordDoorAccess(command.data, pass, publicId);
  },
};

export interface DoorAccessLogState {
  readonly recorded: BucketMap<true>;
}

/** The per-facility, per-day stream of scans that matched no pass. */
export const doorAccessLogDecider: Decider<RecordDoorAccess, DoorAccessRecorded, DoorAccessLogState> = {
  initialState: () => ({ recorded: BucketMap.empty() }),

  evolve(state, event) {
    return event.type === 'DoorAccessRecorded' ? { recorded: state.recorded.set(event.data.accessId.toLowerCase(), true) } : state;
  },

  decide(command, state) {
    const accessId = command.data.accessId.toLowerCase();
    if (state.recorded.get(accessId)) return [];
    return [
      {
        type: 'DoorAccessRecorded',
        data: {
          accessId,
          facilityId: command.data.facilityId,
          orgId: null,
          controllerId: command.data.controllerId,
          door: command.data.door,
          direction: command.data.direction,
          result: command.data.result,
          reason: command.data.result === 'granted' ? null : command.data.reason,
          passId: command.data.passId,
          publicId: command.data.publicId,
          scannedAt: command.data.scannedAt,
          receivedAt: command.data.receivedAt,
        },
      },
    ];
  },
};
