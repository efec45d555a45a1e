// What the door-gateway knows about each credential, and how a pass event changes it. Pure:
// (current record, event) -> (next record, link actions). Versions make it idempotent: an event
// at or below the held version changes nothing (an equal version only re-sends what is already
// decided, so a redelivery after a crash between saving and publishing still reaches the broker).
import type { PassEventEnvelope } from '../shared/pass-bus/pass-event-message.js';
import { AllowListDigest, isCredentialId, type CredentialPayload, type RemovalReason } from './contract.js';

export type CredentialState = 'active' | 'revoked' | 'expired';

export interface CredentialRecord {
  /** The pass's public id. */
  readonly credentialId: string;
  readonly facilityId: number;
  readonly passId: number;
  readonly orgId: number;
  /** Stream holding the pass's events (lets access events find the pass without a read model). */
  readonly streamName: string;
  readonly qrHash: string;
  readonly validFrom: string;
  readonly validUntil: string;
  /** Stream revision of the event that set this state. */
  readonly version: number;
  readonly state: CredentialState;
  readonly eventId: string;
  /** When the store recorded that event: where ack latencies are measured from. */
  readonly eventAt: string;
}

export type LinkAction =
  | { readonly kind: 'upsert'; readonly record: CredentialRecord }
  | { readonly kind: 'remove'; readonly record: CredentialRecord; readonly reason: RemovalReason };

export interface Applied {
  /** The record to store, when it changed. */
  readonly next: CredentialRecord | null;
  readonly actions: readonly LinkAction[];
}

const NOTHING: Applied = { next: null, actions: [] };

interface CreatedData {
  passId: number;
  publicId: string;
  orgId: number;
  facilityId: number;
  validFrom: string;
  validUntil: string;
  qrHash: string;
}

interface RevokedData {
  passId: number;
  publicId: string;
  orgId: number;
  facilityId: number;
  qrHash?: string;
}

export class UnusableEventError extends Error {
  override readonly name = 'UnusableEventError';
}

/** The credential id an event concerns, or null for pass events without one. */
export function credentialIdOf(event: PassEventEnvelope): string | null {
  const id = (event.data as { publicId?: unknown }).publicId;
  return typeof id === 'string' ? id : null;
}

export function applyPassEvent(current: CredentialRecord | undefined, event: PassEventEnvelope, now: Date): Applied {
  switch (event.type) {
    case 'PassCreated':
      return created(current, event, now);
    case 'PassRevoked':
    case 'PassCheckedOut':
      // A checked-out guest has left: the pass opens no door again. Withdrawn as a revocation
      // (state `revoked`, reason `revoked` on the link): contract v1 knows no other removal
      // reason and controllers refuse a revoke command with one; an entry scan is then denied
      // with `revoked`, which is what the controllers remember of a withdrawn credential.
      return revoked(current, event);
    default:
      // PassRegistered, PassCheckedIn and later pass events do not change what a door must accept.
      return NOTHING;
  }
}

function replay(current: CredentialRecord): Applied {
  return { next: null, actions: [actionFor(current)] };
}

/** The action that puts a record's current state on the link. */
export function actionFor(record: CredentialRecord): LinkAction {
  return record.state === 'active' ? { kind: 'upsert', record } : { kind: 'remove', record, reason: record.state };
}

function created(current: CredentialRecord | undefined, event: PassEventEnvelope, now: Date): Applied {
  if (current && current.version > event.revision) return NOTHING; // stale duplicate
  if (current && current.version === event.revision) return replay(current);
  const d = event.data as unknown as CreatedData;
  checkCommon(d, event);
  if (typeof d.qrHash !== 'string' || !/^[0-9a-f]{64}$/.test(d.qrHash)) throw new UnusableEventError(`${event.event_id}: qrHash is not SHA-256 hex`);
  if (Number.isNaN(Date.parse(d.validFrom)) || Number.isNaN(Date.parse(d.validUntil))) {
    throw new UnusableEventError(`${event.event_id}: validity window is not ISO 8601`);
  }
  const expired = Date.parse(d.validUntil) <= now.getTime();
  const next: CredentialRecord = {
    credentialId: d.publicId,
    facilityId: d.facilityId,
    passId: d.passId,
    orgId: d.orgId,
    streamName: event.stream_name,
    qrHash: d.qrHash,
    validFrom: new Date(d.validFrom).toISOString(),
    validUntil: new Date(d.validUntil).toISOString(),
    version: event.revision,
    state: expired ? 'expired' : 'active',
    eventId: event.event_id,
    eventAt: event.recorded_at,
  };
  // A pass created already expired (a replay of old history) never reaches the doors.
  if (expired) return { next, actions: current?.state === 'active' ? [{ kind: 'remove', record: next, reason: 'expired' }] : [] };
  return { next, actions: [{ kind: 'upsert', record: next }] };
}

function revoked(current: CredentialRecord | undefined, event: PassEventEnvelope): Applied {
  if (current && current.version > event.revision) return NOTHING;
  if (current && current.version === event.revision) return replay(current);
  const d = event.data as unknown as RevokedData;
  checkCommon(d, event);
  const next: CredentialRecord = current
    ? { ...current, state: 'revoked', version: event.revision, eventId: event.event_id, eventAt: event.recorded_at }
    : {
        // PassCreated never reached us (a topic trimmed by retention): keep a tombstone anyway.
        credentialId: d.publicId,
        facilityId: d.facilityId,
        passId: d.passId,
        orgId: d.orgId,
        streamName: event.stream_name,
        qrHash: typeof d.qrHash === 'string' && /^[0-9a-f]{64}$/.test(d.qrHash) ? d.qrHash : '0'.repeat(64),
        validFrom: event.recorded_at,
        validUntil: event.recorded_at,
        version: event.revision,
        state: 'revoked',
        eventId: event.event_id,
        eventAt: event.recorded_at,
      };
  return { next, actions: [{ kind: 'remove', record: next, reason: 'revoked' }] };
}

function checkCommon(d: { publicId?: unknown; facilityId?: unknown; orgId?: unknown; passId?: unknown }, event: PassEventEnvelope) {
  if (typeof d.publicId !== 'string' || !isCredentialId(d.publicId)) throw new UnusableEventError(`${event.event_id}: publicId is not a topic-safe credential id`);
  if (!Number.isSafeInteger(d.facilityId) || !Number.isSafeInteger(d.orgId) || !Number.isSafeInteger(d.passId)) {
    throw new UnusableEventError(`${event.event_id}: passId, orgId and facilityId must be integers`);
  }
}

/** The record after its validity ended, or null when it is not (yet) due. */
export function expire(record: CredentialRecord, now: Date): CredentialRecord | null {
  if (record.state !== 'active' || Date.parse(record.validUntil) > now.getTime()) return null;
  return { ...record, state: 'expired' };
}

export function credentialPayload(record: CredentialRecord): CredentialPayload {
  return {
    v: 1,
    credential_id: record.credentialId,
    pass_id: record.passId,
    qr_sha256: record.qrHash,
    valid_from: record.validFrom,
    valid_until: record.validUntil,
    version: record.version,
  };
}

interface FacilityList {
  readonly records: Map<string, CredentialRecord>;
  readonly digest: AllowListDigest;
  /** Digests of recent states, newest last: a controller reporting one of them is merely behind. */
  readonly history: Array<{ digest: string; at: number }>;
}

/**
 * The active credentials of every facility, in memory, with each facility's digest kept up to date
 * in O(1) per change. Loaded from the store at start; the store stays the source of truth.
 */
export class AllowLists {
  private readonly facilities = new Map<number, FacilityList>();

  constructor(private readonly historyMs = 60_000) {}

  /** Puts a record's state into the lists: active records are held, others dropped. */
  set(record: CredentialRecord, now = Date.now()): void {
    const list = this.list(record.facilityId);
    const held = list.records.get(record.credentialId);
    if (held && held.version === record.version && held.state === record.state) return;
    if (held) {
      list.digest.remove(held.credentialId, held.version);
      list.records.delete(held.credentialId);
    }
    if (record.state === 'active') {
      list.records.set(record.credentialId, record);
      list.digest.add(record.credentialId, record.version);
    }
    this.remember(list, now);
  }

  get(facilityId: number, credentialId: string): CredentialRecord | undefined {
    return this.facilities.get(facilityId)?.records.get(credentialId);
  }

  find(credentialId: string): CredentialRecord | undefined {
    for (const list of this.facilities.values()) {
      const r = list.records.get(credentialId);
      if (r) return r;
    }
    return undefined;
  }

  active(facilityId: number): CredentialRecord[] {
    return [...(this.facilities.get(facilityId)?.records.values() ?? [])];
  }

  facilityIds(): number[] {
    return [...this.facilities.keys()];
  }

  digest(facilityId: number): string {
    return this.facilities.get(facilityId)?.digest.hex ?? '0'.repeat(64);
  }

  count(facilityId: number): number {
    return this.facilities.get(facilityId)?.records.size ?? 0;
  }

  /** True when `digest` is the current state or one held within the history window. */
  recentlyHad(facilityId: number, digest: string, now = Date.now()): boolean {
    if (digest === this.digest(facilityId)) return true;
    const list = this.facilities.get(facilityId);
    if (!list) return false;
    return list.history.some((h) => h.digest === digest && now - h.at <= this.historyMs);
  }

  /** Active records whose validity has ended. */
  due(now: Date): CredentialRecord[] {
    const t = now.getTime();
    const out: CredentialRecord[] = [];
    for (const list of this.facilities.values()) {
      for (const r of list.records.values()) if (Date.parse(r.validUntil) <= t) out.push(r);
    }
    return out;
  }

  private list(facilityId: number): FacilityList {
    let list = this.facilities.get(facilityId);
    if (!list) {
      list = { records: new Map(), digest: new AllowListDigest(), history: [] };
      this.facilities.set(facilityId, list);
    }
    return list;
  }

  private remember(list: FacilityList, now: number): void {
    list.history.push({ digest: list.digest.hex, at: now });
    // Bounded both by time and by count, so a burst cannot grow it without limit.
    while (list.history.length > 0 && (list.history.length > 4096 || now - list.history[0]!.at > this.historyMs)) {
      list.history.shift();
    }
  }
}
