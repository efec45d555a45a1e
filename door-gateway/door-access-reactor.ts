// The command-side reactor of the door path: consumes guestpass.door-events in its own consumer
// group and records each scan in the event log (DoorAccessRecorded), checking a pass in
// (PassCheckedIn) on its first granted entry and out (PassCheckedOut) on a granted scan at an
// exit reader. Deciders in shared/domain/pass-check-in.ts.
//
// Idempotent end to end: the access id assigned by the controller travels with the scan through
// MQTT and Kafka; the deciders ignore an access id already recorded on the stream, so a
// redelivery from either broker changes nothing. Offsets are committed after the append.
// It belongs to the command side (it appends through the command handler); it lives here, beside
// the gateway that feeds it, and runs in the door-gateway process and in the embedded default.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import { CommandHandler, type CommandContext } from '../shared/event-store/command-handler.js';
import { InvalidEventError } from '../shared/event-store/validating-event-store.js';
import { isPassPublicId } from '../shared/domain/pass-request.js';
import { streams } from '../shared/domain/events.js';
import { doorAccessLogDecider, passDoorAccessDecider, UnknownPassError, type RecordDoorAccess } from '../shared/domain/pass-check-in.js';
import { DOOR_EVENTS_TOPIC, type BusConsumer, type DeliveredMessage, type PassBus } from '../shared/pass-bus/pass-bus.js';
import { parseDoorEventMessage, type DoorEventEnvelope } from '../shared/pass-bus/door-event-message.js';
import { MalformedMessageError } from '../shared/pass-bus/pass-event-message.js';
import { directionOf } from './door-event-direction.js';

export const DOOR_ACCESS_REACTOR_GROUP = 'guestpass-door-access-reactor';

export interface DoorAccessReactorOptions {
  readonly bus: PassBus;
  readonly store: EventStore;
  readonly logger: Logger;
  /** Read models, only to locate a pass's stream when the gateway could not tell (pass_list). */
  readonly knex?: Knex;
  readonly groupId?: string;
}

export class DoorAccessReactor {
  private readonly handler: CommandHandler;
  private readonly log: Logger;
  private consumer: BusConsumer | null = null;
  recorded = 0;

  constructor(private readonly options: DoorAccessReactorOptions) {
    this.handler = new CommandHandler(options.store, 10_000);
    this.log = options.logger.child({ component: 'door-access-reactor' });
  }

  async start(): Promise<void> {
    await this.options.bus.ensureTopics();
    this.consumer = await this.options.bus.consume({
      topic: DOOR_EVENTS_TOPIC,
      groupId: this.options.groupId ?? DOOR_ACCESS_REACTOR_GROUP,
      maxBatchSize: 100,
      onMessages: (messages) => this.handle(messages),
      onError: (error) => this.log.warn({ err: error }, 'door event batch failed; it will be delivered again'),
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = null;
  }

  private async handle(messages: readonly DeliveredMessage[]): Promise<void> {
    for (const message of messages) {
      let envelope: DoorEventEnvelope;
      try {
        envelope = parseDoorEventMessage(message);
      } catch (error) {
        if (!(error instanceof MalformedMessageError)) throw error;
        this.log.error({ err: error, offset: message.offset, partition: message.partition }, 'skipping malformed door event');
        continue;
      }
      try {
        await this.record(envelope);
      } catch (error) {
        // Deterministic: the same message would fail the same way for ever. Skip it, loudly.
        if (!(error instanceof InvalidEventError)) throw error;
        this.log.error({ err: error, accessId: envelope.access_id }, 'skipping door event that does not fit the event schema');
      }
    }
  }

  private async record(envelope: DoorEventEnvelope): Promise<void> {
    const publicId = envelope.credential_id && isPassPublicId(envelope.credential_id) ? envelope.credential_id : null;
    const scannedAt = normaliseTime(envelope.scanned_at) ?? normaliseTime(envelope.received_at) ?? new Date().toISOString();
    const command: RecordDoorAccess = {
      type: 'RecordDoorAccess',
      data: {
        accessId: envelope.access_id.toLowerCase(),
        facilityId: envelope.facility_id,
        controllerId: envelope.controller_id,
        door: envelope.door,
        direction: directionOf(envelope),
        result: envelope.result,
        reason: envelope.result === 'granted' ? null : (envelope.reason ?? 'unknown_credential'),
        publicId,
        passId: envelope.pass_id,
        scannedAt,
        receivedAt: normaliseTime(envelope.received_at) ?? new Date().toISOString(),
      },
    };
    const context: CommandContext = {
      correlationId: command.data.accessId,
      causationId: null,
      actor: { kind: 'system', name: 'door-gateway' },
      now: new Date(),
    };
    const stream = publicId ? (envelope.stream_name ?? (await this.streamOf(envelope.pass_id))) : null;
    if (stream) {
      try {
        const result = await this.handler.handle(stream, passDoorAccessDecider, command, context);
        this.recorded += result.events.length > 0 ? 1 : 0;
        if (result.events.some((e) => e.type === 'PassCheckedIn')) this.log.info({ publicId, accessId: command.data.accessId }, 'pass checked in');
        if (result.events.some((e) => e.type === 'PassCheckedOut')) this.log.info({ publicId, accessId: command.data.accessId }, 'pass checked out');
        return;
      } catch (error) {
        if (!(error instanceof UnknownPassError)) throw error;
        this.log.warn({ publicId, stream }, 'pass not found in its stream; recording the scan in the facility log');
      }
    }
    const day = scannedAt.slice(0, 10);
    const result = await this.handler.handle(streams.doorAccessLog(envelope.facility_id, day), doorAccessLogDecider, command, context);
    this.recorded += result.events.length > 0 ? 1 : 0;
  }

  private async streamOf(passId: number | null): Promise<string | null> {
    if (passId === null || !this.options.knex) return null;
    try {
      const row = await this.options.knex('pass_list').where({ pass_id: passId }).first<{ stream_name: string } | undefined>('stream_name');
      return row?.stream_name ?? null;
    } catch (error) {
      this.log.warn({ err: error, passId }, 'pass_list lookup failed');
      return null;
    }
  }
}

function normaliseTime(value: string | null | undefined): string | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}
