// Where the door-gateway keeps its records (tables of migrations 004 and 007): PostgreSQL. The lock
// that makes it the deployment's one active gateway is its caller's (gateway-role.ts).
import type { Knex } from 'knex';
import type { CredentialRecord } from './credential-state.js';

export interface AckRecord {
  readonly credentialId: string;
  readonly controllerId: string;
  readonly facilityId: number;
  readonly version: number;
  readonly op: 'upsert' | 'remove';
  readonly eventAt: string | null;
  readonly ackedAt: string;
  readonly latencyMs: number | null;
}

export interface ControllerStatusRecord {
  readonly facilityId: number;
  readonly controllerId: string;
  readonly state: 'online' | 'offline';
  readonly digest: string | null;
  readonly credentialCount: number | null;
  readonly at: string;
}

export interface DoorCredentialStore {
  load(credentialIds: readonly string[]): Promise<Map<string, CredentialRecord>>;
  /** Upserts; a record never replaces one with a higher version. */
  save(records: readonly CredentialRecord[]): Promise<void>;
  loadActive(): Promise<CredentialRecord[]>;
  recordAcks(acks: readonly AckRecord[]): Promise<void>;
  recordControllerStatus(status: ControllerStatusRecord): Promise<void>;
  recordResync(facilityId: number, controllerId: string, at: string): Promise<void>;
}

interface CredentialRow {
  credential_id: string;
  facility_id: number;
  pass_id: number | string;
  org_id: number;
  stream_name: string;
  qr_hash: string;
  valid_from: Date;
  valid_until: Date;
  version: number;
  state: CredentialRecord['state'];
  event_id: string;
  event_at: Date;
}

function fromRow(r: CredentialRow): CredentialRecord {
  return {
    credentialId: r.credential_id,
    facilityId: r.facility_id,
    passId: Number(r.pass_id),
    orgId: r.org_id,
    streamName: r.stream_name,
    qrHash: r.qr_hash,
    validFrom: r.valid_from.toISOString(),
    validUntil: r.valid_until.toISOString(),
    version: r.version,
    state: r.state,
    eventId: r.event_id,
    eventAt: r.event_at.toISOString(),
  };
}

function toRow(r: CredentialRecord) {
  return {
    credential_id: r.credentialId,
    facility_id: r.facilityId,
    pass_id: r.passId,
    org_id: r.orgId,
    stream_name: r.streamName,
    qr_hash: r.qrHash,
    valid_from: r.validFrom,
    valid_until: r.validUntil,
    version: r.version,
    state: r.state,
    event_id: r.eventId,
    event_at: r.eventAt,
    updated_at: new Date().toISOString(),
  };
}

export class KnexDoorCredentialStore implements DoorCredentialStore {
  constructor(private readonly knex: Knex) {}

  async load(credentialIds: readonly string[]): Promise<Map<string, CredentialRecord>> {
    const out = new Map<string, CredentialRecord>();
    if (credentialIds.length === 0) return out;
    const rows = await this.knex<CredentialRow>('door_credentials').whereIn('credential_id', [...credentialIds]);
    for (const r of rows) out.set(r.credential_id, fromRow(r));
    return out;
  }

  async save(records: readonly CredentialRecord[]): Promise<void> {
    if (records.length === 0) return;
    // The version guard makes a stale writer (an expiry sweep racing a revocation) a no-op.
    for (let i = 0; i < records.length; i += 1000) {
      await this.knex('door_credentials')
        .insert(records.slice(i, i + 1000).map(toRow))
        .onConflict('credential_id')
        .merge()
        .whereRaw('door_credentials.version <= excluded.version');
    }
  }

  async loadActive(): Promise<CredentialRecord[]> {
    const rows = await this.knex<CredentialRow>('door_credentials').where({ state: 'active' });
    return rows.map(fromRow);
  }

  async recordAcks(acks: readonly AckRecord[]): Promise<void> {
    if (acks.length === 0) return;
    const rows = acks.map((a) => ({
      credential_id: a.credentialId,
      controller_id: a.controllerId,
      facility_id: a.facilityId,
      version: a.version,
      op: a.op,
      event_at: a.eventAt,
      acked_at: a.ackedAt,
      latency_ms: a.latencyMs,
    }));
    for (let i = 0; i < rows.length; i += 1000) {
      await this.knex('door_credential_acks')
        .insert(rows.slice(i, i + 1000))
        .onConflict(['credential_id', 'controller_id', 'version', 'op'])
        .ignore();
    }
  }

  async recordControllerStatus(s: ControllerStatusRecord): Promise<void> {
    await this.knex('door_controllers')
      .insert({
        facility_id: s.facilityId,
        controller_id: s.controllerId,
        state: s.state,
        digest: s.digest,
        credential_count: s.credentialCount,
        last_status_at: s.at,
      })
      .onConflict(['facility_id', 'controller_id'])
      .merge(
        s.state === 'online'
          ? ['state', 'digest', 'credential_count', 'last_status_at']
          : ['state', 'last_status_at'], // an offline will carries no digest: keep the last known one
      );
  }

  async recordResync(facilityId: number, controllerId: string, at: string): Promise<void> {
    await this.knex('door_controllers')
      .where({ facility_id: facilityId, controller_id: controllerId })
      .update({ last_resync_at: at, resyncs: this.knex.raw('resyncs + 1') });
  }
}
