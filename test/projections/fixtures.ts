// Events and an in-memory row store for projection tests: `feed` does what the runner does with
// a batch (projectBatch over the loaded rows, then upserts and deletes), without a database.
import { randomUUID } from 'node:crypto';
import type { GuestDetails } from '../../shared/domain/events.js';
import type { Actor } from '../../shared/event-store/event-store.js';
import {
  keyString,
  projectBatch,
  type AnyProjection,
  type OpenedDomainEvent,
  type ProjectionEvent,
  type StoredRow,
} from '../../projections/projection.js';

const operator: Actor = { kind: 'operator' };

/** Builds recorded events with increasing global positions. */
export class EventLog {
  readonly events: ProjectionEvent[] = [];
  private next = 1n;
  private clock = Date.parse('2025-03-01T09:00:00.000Z');

  add<E extends OpenedDomainEvent>(event: E, options: { stream?: string; occurredAt?: string } = {}): ProjectionEvent {
    const position = { commit: 1000n + this.next, prepare: this.next };
    this.next++;
    this.clock += 1000;
    const recorded = {
      ...event,
      id: randomUUID(),
      streamName: options.stream ?? 'test-stream',
      revision: 0,
      position,
      recordedAt: new Date(this.clock),
      metadata: {
        correlationId: randomUUID(),
        causationId: null,
        actor: operator,
        occurredAt: options.occurredAt ?? new Date(this.clock).toISOString(),
        schemaVersion: 1,
      },
    } as ProjectionEvent;
    this.events.push(recorded);
    return recorded;
  }
}

export type Rows = Map<string, StoredRow>;

/** Applies events as one runner batch to the rows (mutated and returned). */
export function feed(projection: AnyProjection, events: readonly ProjectionEvent[], rows: Rows = new Map()): Rows {
  const loaded: Rows = new Map();
  for (const [k, row] of rows) loaded.set(k, row);
  const changes = projectBatch(projection, loaded, events);
  for (const row of changes.upserts) rows.set(keyString(row[projection.keyColumn] as string | number), row);
  for (const key of changes.deletes) rows.delete(keyString(key));
  return rows;
}

/** Applies events one batch each, as a runner that fetched them one at a time would. */
export function feedOneByOne(projection: AnyProjection, events: readonly ProjectionEvent[], rows: Rows = new Map()): Rows {
  for (const event of events) feed(projection, [event], rows);
  return rows;
}

/** The read model's view of the rows: without the runner's position columns, by key. */
export function visible(rows: Rows): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [k, row] of [...rows].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { _commit: _c, _prepare: _p, ...rest } = row;
    out[k] = rest;
  }
  return out;
}

/** A deep copy, so a later feed cannot alter a snapshot taken for comparison. */
export function snapshot(rows: Rows): Rows {
  return new Map([...rows].map(([k, row]) => [k, structuredClone(row)]));
}

export function guest(overrides: Partial<GuestDetails> = {}): GuestDetails {
  return {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'Ada@Example.org',
    phone: '+441234567890',
    country: null,
    vehicleNumber: null,
    notes: null,
    invitedBy: null,
    qrValues: {},
    ...overrides,
  };
}

export function passCreated(
  passId: number,
  options: { orgId?: number; createdBy?: number; guest?: GuestDetails | null; facilityId?: number; batchId?: string } = {},
) {
  return {
    type: 'PassCreated' as const,
    data: {
      passId,
      publicId: `gst_${passId.toString(36).padStart(8, '0')}`,
      orgId: options.orgId ?? 1,
      facilityId: options.facilityId ?? 10,
      createdBy: options.createdBy ?? 100,
      batchId: options.batchId ?? `batch-${passId}`,
      batchSize: 1,
      arrivalDate: '2025-03-02',
      arrivalTime: '09:30',
      validFrom: '2025-03-02T09:30:00.000Z',
      validUntil: '2025-03-02T23:59:59.999Z',
      qrHash: `hash-${passId}`,
      guest: options.guest === undefined ? guest() : options.guest,
      passLinkHash: null,
    },
  };
}
