// The door-gateway: keeps every facility's door controllers in step with the pass events.
// It runs only while its process holds the deployment's active gateway lock: the caller holds
// that lock and stops the gateway when it loses it (door-gateway/gateway-role.ts).
//
//   guestpass.pass-events --(consumer group)--> records (PostgreSQL) --MQTT QoS 1--> controllers
//   controllers --acks/status/access--> gateway --> ack latencies, resyncs, guestpass.door-events
//
// Guarantees (see README.md for the contract):
// * A batch's offsets are committed only after the broker acknowledged (PUBACK) every publish it
//   caused, so a crash at any point replays the batch; versions make the replay change nothing.
// * State changes and the publish calls that announce them happen under one lock, in the same
//   order, so the broker's retained allow-list always ends in the newest state even when batches,
//   the expiry sweep and a reconciliation after a broker restart run at the same time.
// * On every (re)connection the retained allow-list on the broker is read back and repaired
//   (a broker restarted without persistence loses it); controllers reporting a digest that is
//   neither the current one nor a recent one get a full resync.
// * Access events are acknowledged to the broker (PUBACK) only after the bus accepted them,
//   over a persistent session, so none is lost while the gateway or Kafka is down.
//
// One piece though past 600 lines: one class whose paths (consumed batches, acks, status and
// resyncs, access forwarding, the expiry sweep, reconnection) share its MQTT connections, its one
// lock and its pending publishes; split, each part would reach into the others' state. Its pure
// parts live elsewhere (contract.ts, credential-state.ts).
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { IPublishPacket } from 'mqtt';
import type { Logger } from '../shared/logger.js';
import { DOOR_EVENTS_TOPIC, PASS_EVENTS_TOPIC, type BatchControl, type BusConsumer, type DeliveredMessage, type PassBus } from '../shared/pass-bus/pass-bus.js';
import { MalformedMessageError, parsePassEventMessage, type PassEventEnvelope } from '../shared/pass-bus/pass-event-message.js';
import { DOOR_EVENT_SCHEMA, toDoorEventMessage } from '../shared/pass-bus/door-event-message.js';
import type { DirectedDoorEventEnvelope } from './door-event-direction.js';
import {
  asAccessEvent,
  asAck,
  asCredential,
  asStatus,
  parseJson,
  doorTopics,
  TOPIC_ROOT,
  type Ack,
  type DoorTopics,
  type Command,
  type RemovalReason,
  type Status,
  type SyncChunk,
} from './contract.js';
import {
  actionFor,
  AllowLists,
  applyPassEvent,
  credentialIdOf,
  credentialPayload,
  expire,
  UnusableEventError,
  type CredentialRecord,
  type LinkAction,
} from './credential-state.js';
import type { AckRecord, DoorCredentialStore } from './credential-store.js';
import { connectLink, endLink, firstConnect, publish, subscribe, unsubscribe, type MqttClient } from './mqtt-link.js';

export const DOOR_GATEWAY_GROUP = 'guestpass-door-gateway';

/** How long a controller reporting a recently held digest has to catch up before it is resynced. */
const STATUS_RECHECK_MS = 500;

export interface DoorGatewayOptions {
  readonly bus: PassBus;
  readonly store: DoorCredentialStore;
  readonly mqttUrl: string;
  readonly logger: Logger;
  /** Base of the MQTT client ids (`-link`, `-access`); stable per instance so sessions persist. */
  readonly clientId?: string;
  readonly groupId?: string;
  /** How often credentials past valid_until are cleared (default 5 s). */
  readonly expirySweepMs?: number;
  /** Credentials per resync message (default 1000). */
  readonly syncChunkSize?: number;
  /** Partitions handled at once (default 4; each stays in order). */
  readonly concurrency?: number;
  /** Forward controllers' access events to guestpass.door-events (default true). */
  readonly forwardAccessEvents?: boolean;
  /** Wait this long for the first MQTT connection at start (default 60 s). */
  readonly connectTimeoutMs?: number;
  readonly mqttUsername?: string;
  readonly mqttPassword?: string;
  /** MQTT topic root of this deployment (MQTT_TOPIC_ROOT, default `guestpass/v1`): the gateway reads and writes, and reconciles, nothing outside it. */
  readonly topicRoot?: string;
  readonly now?: () => Date;
}

export interface AckObservation {
  readonly facilityId: number;
  readonly controllerId: string;
  readonly credentialId: string;
  readonly version: number;
  readonly op: 'upsert' | 'remove';
  readonly applied: boolean;
  /** From the event's recording to this acknowledgement; null when the change is not one we sent lately. */
  readonly latencyMs: number | null;
  /** Why a `remove` was sent (`revoked` also stands for a check-out), when it is one we sent lately. */
  readonly reason?: RemovalReason;
}

export interface GatewayStats {
  readonly eventsApplied: number;
  readonly published: number;
  readonly acks: number;
  readonly resyncs: number;
  readonly accessForwarded: number;
  readonly reconciliations: number;
  readonly expired: number;
}

interface Pending {
  readonly eventAt: number;
  readonly facilityId: number;
  readonly sentAt: number;
  readonly reason?: RemovalReason;
}

const PENDING_TTL_MS = 10 * 60_000;

class Stopping extends Error {
  override readonly name = 'Stopping';
}

export class DoorGateway extends EventEmitter {
  readonly lists = new AllowLists();
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly topics: DoorTopics;
  private link: MqttClient | null = null;
  private monitor: MqttClient | null = null;
  private access: MqttClient | null = null;
  private consumer: BusConsumer | null = null;
  private lock: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private ackBuffer: AckRecord[] = [];
  private readonly pending = new Map<string, Pending>();
  private readonly resyncsInFlight = new Map<string, { syncId: string; startedAt: number }>();
  private readonly statusRequested = new Set<number>();
  /** Controllers given one grace period for reporting a digest held moments ago (see onStatus). */
  private readonly lagging = new Map<string, NodeJS.Timeout>();
  private collecting: ((topic: string, payload: Buffer, retain: boolean) => void) | null = null;
  private linkReady: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly counters = { eventsApplied: 0, published: 0, acks: 0, resyncs: 0, accessForwarded: 0, reconciliations: 0, expired: 0 };
  /** Batches of pass events being handled: when the bus accepted each one's oldest message. */
  private readonly batchesUnderWay = new Set<{ readonly oldestAt: number }>();

  constructor(private readonly options: DoorGatewayOptions) {
    super();
    this.log = options.logger.child({ component: 'door-gateway' });
    this.now = options.now ?? (() => new Date());
    this.topics = doorTopics(options.topicRoot);
  }

  get stats(): GatewayStats {
    return { ...this.counters };
  }

  /**
   * How long ago the bus accepted the oldest pass event this gateway is still handling (0 when it
   * handles none): how far the doors are behind the bus.
   */
  lagMs(now = Date.now()): number {
    let oldest = now;
    for (const batch of this.batchesUnderWay) oldest = Math.min(oldest, batch.oldestAt);
    return now - oldest;
  }

  /** True while the MQTT links the doors depend on are connected. */
  get mqttConnected(): boolean {
    return Boolean(this.link?.connected && this.monitor?.connected && (this.access === null || this.access.connected));
  }

  /**
   * Starts; the caller holds the deployment's active gateway lock (gateway-role.ts). Each gateway
   * keeps its own allow-lists in memory and repairs controllers and the broker's retained lists
   * from them: two active at once would undo each other's changes (a revoked pass sent back to the
   * doors). So another process's gateway is a standby, started only once that lock is its own.
   */
  async start(): Promise<void> {
    for (const record of await this.options.store.loadActive()) this.lists.set(record);
    // Two deployments on one broker (MQTT_TOPIC_ROOT) must not share client ids: the broker would
    // drop one gateway's connection each time the other's connects. The default root keeps the old id.
    const root = this.options.topicRoot && this.options.topicRoot !== TOPIC_ROOT ? `${this.options.topicRoot}-` : '';
    const base = this.options.clientId ?? `guestpass-door-gateway-${root}${hostname()}`.replace(/[^A-Za-z0-9_.-]/g, '-');
    const timeout = this.options.connectTimeoutMs ?? 60_000;
    const credentials = { username: this.options.mqttUsername, password: this.options.mqttPassword };

    // Link: publishes credentials and commands (and reads the retained list back). A clean
    // session is enough: what matters is repaired on every connection (reconcile). It carries
    // nothing else, so a PUBACK never queues behind a flood of controller acknowledgements.
    const link = connectLink({ url: this.options.mqttUrl, clientId: `${base}-link`, clean: true, ...definedOnly(credentials) });
    this.link = link;
    link.on('message', (topic, payload, packet) => this.onLinkMessage(topic, payload, packet.retain));
    link.on('connect', () => {
      this.linkReady = this.onLinkConnect().catch((error) => {
        if (!this.stopping) this.log.error({ err: error }, 'reconciliation after MQTT connect failed');
      });
    });
    link.on('error', (error) => this.log.warn({ err: error }, 'MQTT link error'));
    link.on('offline', () => this.log.warn('MQTT link offline; reconnecting'));
    await firstConnect(link, timeout);
    await this.linkReady;

    // Monitor: hears controllers' acknowledgements and status (retained, so a clean session is enough).
    const monitor = connectLink({ url: this.options.mqttUrl, clientId: `${base}-monitor`, clean: true, ...definedOnly(credentials) });
    this.monitor = monitor;
    monitor.on('message', (topic, payload, packet) => this.onLinkMessage(topic, payload, packet.retain));
    monitor.on('connect', () => {
      subscribe(monitor, [this.topics.allControllers('acks'), this.topics.allControllers('status')])
        .then(() => {
          // Retained statuses may be old: ask every controller we know of for a fresh one.
          this.statusRequested.clear();
          for (const facilityId of this.lists.facilityIds()) this.requestStatus(facilityId);
        })
        .catch((error) => this.log.warn({ err: error }, 'monitor subscription failed'));
    });
    monitor.on('error', (error) => this.log.warn({ err: error }, 'MQTT monitor error'));
    await firstConnect(monitor, timeout);

    // Access events: a persistent session with QoS 1 so scans made while we are away wait in the
    // broker; each is acknowledged only after the bus has it (handleMessage defers the PUBACK).
    if (this.options.forwardAccessEvents ?? true) {
      const access = connectLink({ url: this.options.mqttUrl, clientId: `${base}-access`, clean: false, ...definedOnly(credentials) });
      this.access = access;
      access.handleMessage = (packet: IPublishPacket, done: (error?: Error) => void) => {
        this.onAccessMessage(packet).then(
          () => done(),
          (error) => {
            // Stopping: leave it unacknowledged; the broker redelivers it to the next session.
            if (!(error instanceof Stopping)) this.log.error({ err: error, topic: packet.topic }, 'access event not forwarded');
          },
        );
      };
      access.on('connect', () => {
        subscribe(access, [this.topics.allControllers('access')]).catch((error) => this.log.warn({ err: error }, 'access subscription failed'));
      });
      access.on('error', (error) => this.log.warn({ err: error }, 'MQTT access link error'));
      await firstConnect(access, timeout);
    }

    await this.options.bus.ensureTopics();
    this.consumer = await this.options.bus.consume({
      topic: PASS_EVENTS_TOPIC,
      groupId: this.options.groupId ?? DOOR_GATEWAY_GROUP,
      concurrency: this.options.concurrency ?? 4,
      onMessages: (messages, control) => this.handlePassEvents(messages, control),
      onError: (error) => this.log.warn({ err: error }, 'pass event batch failed; it will be delivered again'),
    });

    this.timers.push(setInterval(() => void this.sweepExpired(), this.options.expirySweepMs ?? 5000));
    this.timers.push(setInterval(() => void this.flushAcks(), 250));
    for (const t of this.timers) t.unref();
    this.log.info({ bus: this.options.bus.kind, mqtt: redactUrl(this.options.mqttUrl), facilities: this.lists.facilityIds().length }, 'door-gateway started');
  }

  /** Resolves once this gateway publishes nothing more: only then may its caller let go of the lock for a standby. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    for (const t of this.lagging.values()) clearTimeout(t);
    this.lagging.clear();
    await this.consumer?.stop();
    this.consumer = null;
    await this.flushAcks();
    await Promise.all([this.link && endLink(this.link), this.monitor && endLink(this.monitor), this.access && endLink(this.access)]);
    this.link = null;
    this.monitor = null;
    this.access = null;
  }

  // -------------------------------------------------------------------------------------------
  // Pass events -> allow-lists

  private async handlePassEvents(messages: readonly DeliveredMessage[], control: BatchControl): Promise<void> {
    let oldestAt = Date.now();
    for (const m of messages) if (Number.isFinite(m.timestamp) && m.timestamp < oldestAt) oldestAt = m.timestamp;
    const batch = { oldestAt };
    this.batchesUnderWay.add(batch);
    try {
      await this.applyPassEvents(messages, control);
    } finally {
      this.batchesUnderWay.delete(batch);
    }
  }

  private async applyPassEvents(messages: readonly DeliveredMessage[], control: BatchControl): Promise<void> {
    const events: Array<{ envelope: PassEventEnvelope; credentialId: string }> = [];
    for (const m of messages) {
      try {
        const envelope = parsePassEventMessage(m);
        const credentialId = credentialIdOf(envelope);
        if (credentialId) events.push({ envelope, credentialId });
      } catch (error) {
        if (!(error instanceof MalformedMessageError)) throw error;
        // Retrying cannot fix a malformed message; holding the partition would stop every door.
        this.log.error({ err: error, topic: m.topic, partition: m.partition, offset: m.offset }, 'skipping malformed pass event message');
      }
    }
    if (events.length === 0) return;
    const sends = await this.exclusive(async () => {
      const current = await this.options.store.load([...new Set(events.map((e) => e.credentialId))]);
      // The records are the truth, the lists a copy. A gateway that took over from a killed one
      // loaded its lists while the dead one's last write could still land (PostgreSQL finishes a
      // statement whose client died), and a write may land while its answer is lost; either
      // batch comes again, its records already at its versions. Bring the lists to the records
      // first, or a resync would undo them at the doors (test/door/gateway-takeover.int.spec.ts).
      for (const record of current.values()) {
        const held = this.lists.get(record.facilityId, record.credentialId);
        if (record.state === 'active' ? held?.version === record.version : held === undefined) continue;
        this.log.warn({ credentialId: record.credentialId, version: record.version, state: record.state }, 'allow-list behind its record; brought up to it');
        this.lists.set(record);
      }
      const changed = new Map<string, CredentialRecord>();
      // Only the last action per credential matters: it carries the newest version and state.
      const actions = new Map<string, LinkAction>();
      const now = this.now();
      for (const { envelope, credentialId } of events) {
        try {
          const result = applyPassEvent(changed.get(credentialId) ?? current.get(credentialId), envelope, now);
          if (result.next) changed.set(credentialId, result.next);
          for (const a of result.actions) {
            actions.delete(credentialId);
            actions.set(credentialId, a);
          }
        } catch (error) {
          if (!(error instanceof UnusableEventError)) throw error;
          this.log.error({ err: error, eventId: envelope.event_id }, 'skipping pass event the door path cannot use');
        }
      }
      await this.options.store.save([...changed.values()]);
      this.counters.eventsApplied += changed.size;
      for (const r of changed.values()) this.lists.set(r);
      return [...actions.values()].map((a) => this.perform(a));
    });
    await this.awaitAcknowledged(sends, control);
  }

  /** Waits for the broker's PUBACKs, keeping the group membership alive; gives up when the partition moves. */
  private async awaitAcknowledged(sends: readonly Promise<void>[], control: BatchControl): Promise<void> {
    let settled = false;
    const all = Promise.all(sends).finally(() => {
      settled = true;
    });
    all.catch(() => undefined);
    let lastBeat = Date.now();
    while (!settled) {
      await Promise.race([all, sleep(100)]);
      if (settled) break;
      if (!control.isActive() || this.stopping) throw new Error('stopped waiting for MQTT acknowledgements; the batch will be delivered again');
      if (Date.now() - lastBeat >= 2000) {
        lastBeat = Date.now();
        await control.heartbeat().catch(() => undefined);
      }
    }
    await all;
  }

  /** Issues the publishes of one action now (call order = broker order); resolves on PUBACK. */
  private perform(action: LinkAction): Promise<void> {
    const link = this.link;
    if (!link) return Promise.reject(new Error('MQTT link not started'));
    const r = action.record;
    // Keyed by the op too: an expiry removes at the version of the add it ends. Its latency counts
    // from the end of validity, as no event caused it.
    const cause = action.kind === 'remove' && action.reason === 'expired' ? r.validUntil : r.eventAt;
    this.pending.set(`${r.credentialId}:${r.version}:${action.kind}`, {
      eventAt: Date.parse(cause),
      facilityId: r.facilityId,
      sentAt: Date.now(),
      ...(action.kind === 'remove' ? { reason: action.reason } : {}),
    });
    const topic = this.topics.credential(r.facilityId, r.credentialId);
    if (action.kind === 'upsert') {
      this.counters.published++;
      return publish(link, topic, JSON.stringify(credentialPayload(r)), true);
    }
    // An empty retained message deletes the retained copy (late subscribers never see it); the
    // command tells controllers online now or with a waiting session, with a version to dedupe.
    const command: Command = { v: 1, type: 'revoke', credential_id: r.credentialId, pass_id: r.passId, version: r.version, reason: action.reason };
    this.counters.published += 2;
    // The command first: online controllers act (and acknowledge) on it at once; the cleared
    // retained message follows on the same connection, so a later subscriber never sees the credential.
    return Promise.all([publish(link, this.topics.commands(r.facilityId), JSON.stringify(command), false), publish(link, topic, '', true)]).then(
      () => undefined,
    );
  }

  private async sweepExpired(): Promise<void> {
    if (this.stopping) return;
    try {
      const sends = await this.exclusive(async () => {
        const now = this.now();
        const due = this.lists.due(now).map((r) => expire(r, now)).filter((r): r is CredentialRecord => r !== null);
        if (due.length === 0) return [];
        await this.options.store.save(due);
        for (const r of due) this.lists.set(r);
        this.counters.expired += due.length;
        return due.map((r) => this.perform(actionFor(r)));
      });
      if (sends.length > 0) this.log.info({ count: sends.length }, 'clearing expired credentials');
      await Promise.all(sends);
    } catch (error) {
      if (!this.stopping) this.log.warn({ err: error }, 'expiry sweep failed; retrying at the next sweep');
    }
  }

  // -------------------------------------------------------------------------------------------
  // Broker state: reconcile the retained allow-list after every connection

  private async onLinkConnect(): Promise<void> {
    await this.reconcile(this.link!);
  }

  private async reconcile(link: MqttClient): Promise<void> {
    const started = Date.now();
    const retained = new Map<string, Buffer>();
    // QoS 0 for this read: brokers queue QoS 1 deliveries per client and drop beyond the limit
    // (Mosquitto's max_queued_messages, 1000 by default), which would hide most of a large
    // retained set; QoS 0 deliveries go straight to the socket, in order. A marker published
    // after SUBACK therefore reaches us after the retained messages; the quiet period covers
    // brokers that stream retained messages asynchronously. Facility 0 is reserved for it.
    const marker = this.topics.credential(0, `_reconcile-${randomUUID()}`);
    let markerSeen = false;
    let lastRetainedAt = Date.now();
    this.collecting = (topic, payload, retain) => {
      if (topic === marker) markerSeen = true;
      else if (retain && this.topics.parseCredential(topic)) {
        retained.set(topic, payload);
        lastRetainedAt = Date.now();
      }
    };
    try {
      await subscribe(link, [this.topics.allCredentials], 0);
      await publish(link, marker, '', false);
      const deadline = Date.now() + 30_000;
      while (!(markerSeen && Date.now() - lastRetainedAt >= 150) && Date.now() < deadline) await sleep(25);
    } finally {
      this.collecting = null;
    }
    await unsubscribe(link, [this.topics.allCredentials]);

    const sends = await this.exclusive(async () => {
      const out: Promise<void>[] = [];
      const expected = new Set<string>();
      let republished = 0;
      for (const facilityId of this.lists.facilityIds()) {
        for (const r of this.lists.active(facilityId)) {
          const topic = this.topics.credential(facilityId, r.credentialId);
          expected.add(topic);
          const held = retained.has(topic) ? asCredential(parseJson(retained.get(topic)!)) : null;
          if (!held || held.version !== r.version || held.qr_sha256 !== r.qrHash || held.valid_until !== r.validUntil) {
            out.push(this.perform({ kind: 'upsert', record: r }));
            republished++;
          }
        }
      }
      const strays = [...retained.entries()].filter(([topic, payload]) => payload.length > 0 && !expected.has(topic));
      const known = await this.options.store.load(strays.map(([topic]) => this.topics.parseCredential(topic)!.credentialId));
      for (const [topic] of strays) {
        const record = known.get(this.topics.parseCredential(topic)!.credentialId);
        // A record we hold as revoked or expired: clear it and tell controllers, with its version.
        if (record && record.state !== 'active') out.push(this.perform(actionFor(record)));
        else out.push(publish(link, topic, '', true)); // not ours (or unknown): just clear the retained copy
      }
      this.counters.reconciliations++;
      this.log.info(
        { retained: retained.size, republished, cleared: strays.length, ms: Date.now() - started },
        'reconciled retained allow-list with the broker',
      );
      return out;
    });
    await Promise.all(sends);
  }

  private requestStatus(facilityId: number): void {
    if (!this.link || this.statusRequested.has(facilityId)) return;
    this.statusRequested.add(facilityId);
    this.askForStatus(facilityId);
  }

  // -------------------------------------------------------------------------------------------
  // Controllers -> gateway

  private onLinkMessage(topic: string, payload: Buffer, retain: boolean): void {
    if (this.collecting && topic.includes('/credentials/')) {
      this.collecting(topic, payload, retain);
      return;
    }
    const where = this.topics.parseController(topic);
    if (!where) return;
    const body = parseJson(payload);
    if (where.leaf === 'acks') {
      const ack = asAck(body);
      if (ack) this.onAck(where.facilityId, where.controllerId, ack);
      else this.log.warn({ topic }, 'ignoring malformed ack');
    } else if (where.leaf === 'status') {
      if (payload.length === 0) return; // a cleared status (controller decommissioned)
      const status = asStatus(body);
      if (status) this.onStatus(where.facilityId, where.controllerId, status, retain);
      else this.log.warn({ topic }, 'ignoring malformed status');
    }
  }

  private onAck(facilityId: number, controllerId: string, ack: Ack): void {
    const now = Date.now();
    if (ack.op === 'sync') {
      const key = `${facilityId}/${controllerId}`;
      const inFlight = this.resyncsInFlight.get(key);
      if (inFlight?.syncId === ack.sync_id) this.resyncsInFlight.delete(key);
      const ms = inFlight ? now - inFlight.startedAt : null;
      this.log.info({ facilityId, controllerId, credentials: ack.credential_count, ms, inSync: ack.digest === this.lists.digest(facilityId) }, 'controller resynced');
      this.emit('synced', { facilityId, controllerId, syncId: ack.sync_id, digest: ack.digest, credentialCount: ack.credential_count, ms });
      return;
    }
    this.counters.acks++;
    const pending = this.pending.get(`${ack.credential_id}:${ack.version}:${ack.op}`);
    const latencyMs = pending ? now - pending.eventAt : null;
    this.ackBuffer.push({
      credentialId: ack.credential_id,
      controllerId,
      facilityId,
      version: ack.version,
      op: ack.op,
      eventAt: pending ? new Date(pending.eventAt).toISOString() : null,
      ackedAt: new Date(now).toISOString(),
      latencyMs,
    });
    const observation: AckObservation = {
      facilityId,
      controllerId,
      credentialId: ack.credential_id,
      version: ack.version,
      op: ack.op,
      applied: ack.applied,
      latencyMs,
      ...(pending?.reason ? { reason: pending.reason } : {}),
    };
    this.emit('ack', observation);
  }

  private onStatus(facilityId: number, controllerId: string, status: Status, retained: boolean): void {
    const at = status.at ?? new Date().toISOString();
    this.options.store
      .recordControllerStatus({
        facilityId,
        controllerId,
        state: status.state,
        digest: status.state === 'online' ? status.digest : null,
        credentialCount: status.state === 'online' ? status.credential_count : null,
        at,
      })
      .catch((error) => this.log.warn({ err: error }, 'controller status not recorded'));
    this.emit('status', { facilityId, controllerId, status, retained });
    const key = `${facilityId}/${controllerId}`;
    if (status.state !== 'online') {
      this.endGrace(key);
      this.log.info({ facilityId, controllerId }, 'controller offline');
      return;
    }
    if (retained) {
      // Possibly stale (published before we connected): ask for a fresh report instead.
      this.requestStatus(facilityId);
      return;
    }
    if (status.digest === this.lists.digest(facilityId)) {
      this.endGrace(key);
      return;
    }
    // A digest held moments ago usually means messages still in flight: look again shortly. It
    // can also be a controller that reconnected without its session and reported before its
    // retained list arrived, holding a credential revoked meanwhile: if the next report is still
    // not current, resync. One grace per controller, so a lag never hides a stale list twice.
    if (!this.lagging.has(key) && this.lists.recentlyHad(facilityId, status.digest)) {
      const timer = setTimeout(() => this.askForStatus(facilityId), STATUS_RECHECK_MS);
      timer.unref();
      this.lagging.set(key, timer);
      return;
    }
    this.endGrace(key);
    this.resync(facilityId, controllerId, status.digest);
  }

  private endGrace(key: string): void {
    const timer = this.lagging.get(key);
    if (timer) clearTimeout(timer);
    this.lagging.delete(key);
  }

  /** Asks the facility's controllers to report their status now. */
  private askForStatus(facilityId: number): void {
    if (!this.link) return;
    const command: Command = { v: 1, type: 'report_status' };
    publish(this.link, this.topics.commands(facilityId), JSON.stringify(command), false).catch((error) =>
      this.log.warn({ err: error, facilityId }, 'status request not sent'),
    );
  }

  /** Sends the facility's whole allow-list to one controller, in chunks, built and sent in one tick. */
  resync(facilityId: number, controllerId: string, reportedDigest: string | null = null): void {
    const link = this.link;
    if (!link) return;
    const key = `${facilityId}/${controllerId}`;
    const inFlight = this.resyncsInFlight.get(key);
    if (inFlight && Date.now() - inFlight.startedAt < 10_000) return;
    const syncId = randomUUID();
    this.resyncsInFlight.set(key, { syncId, startedAt: Date.now() });
    const records = this.lists.active(facilityId);
    const digest = this.lists.digest(facilityId);
    const size = this.options.syncChunkSize ?? 1000;
    const chunks = Math.max(1, Math.ceil(records.length / size));
    const topic = this.topics.controller(facilityId, controllerId, 'sync');
    // Everything below runs synchronously: no state change can slip between snapshot and sends.
    const sends: Promise<void>[] = [];
    for (let i = 0; i < chunks; i++) {
      const chunk: SyncChunk = {
        v: 1,
        sync_id: syncId,
        chunk: i,
        chunks,
        digest,
        credentials: records.slice(i * size, (i + 1) * size).map((r) => {
          const { v: _v, ...rest } = credentialPayload(r);
          return rest;
        }),
      };
      sends.push(publish(link, topic, JSON.stringify(chunk), false));
    }
    this.counters.resyncs++;
    this.log.info({ facilityId, controllerId, credentials: records.length, chunks, reportedDigest, digest }, 'resyncing controller');
    this.emit('resync', { facilityId, controllerId, syncId, credentials: records.length });
    this.options.store.recordResync(facilityId, controllerId, new Date().toISOString()).catch(() => undefined);
    Promise.all(sends).catch((error) => this.log.warn({ err: error, facilityId, controllerId }, 'resync not fully sent'));
  }

  private async onAccessMessage(packet: IPublishPacket): Promise<void> {
    const where = this.topics.parseController(packet.topic);
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    const event = where?.leaf === 'access' ? asAccessEvent(parseJson(payload)) : null;
    if (!where || !event) {
      this.log.warn({ topic: packet.topic }, 'dropping malformed access event');
      return;
    }
    let record: CredentialRecord | undefined;
    if (event.credential_id) {
      record = this.lists.get(where.facilityId, event.credential_id);
      if (!record) record = (await this.retry(() => this.options.store.load([event.credential_id!]))).get(event.credential_id);
      if (record && record.facilityId !== where.facilityId) record = undefined; // a credential of another facility
    }
    const envelope: DirectedDoorEventEnvelope = {
      schema: DOOR_EVENT_SCHEMA,
      access_id: event.access_id.toLowerCase(),
      facility_id: where.facilityId,
      controller_id: where.controllerId,
      door: event.door,
      direction: event.direction,
      result: event.result,
      reason: event.reason,
      credential_id: event.credential_id,
      pass_id: record?.passId ?? event.pass_id,
      org_id: record?.orgId ?? null,
      stream_name: record?.streamName ?? null,
      scanned_at: event.scanned_at,
      received_at: new Date().toISOString(),
    };
    await this.retry(() => this.options.bus.publish(DOOR_EVENTS_TOPIC, [toDoorEventMessage(envelope)]));
    this.counters.accessForwarded++;
    this.emit('access', envelope);
  }

  // -------------------------------------------------------------------------------------------

  private async flushAcks(): Promise<void> {
    const now = Date.now();
    for (const [key, p] of this.pending) if (now - p.sentAt > PENDING_TTL_MS) this.pending.delete(key);
    if (this.ackBuffer.length === 0) return;
    const batch = this.ackBuffer;
    this.ackBuffer = [];
    try {
      await this.options.store.recordAcks(batch);
    } catch (error) {
      this.log.warn({ err: error, count: batch.length }, 'acknowledgements not recorded');
    }
  }

  /** Serialises state changes (and the publish calls they make) across partitions and timers. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async retry<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopping) throw new Stopping('door-gateway stopping');
      try {
        return await work();
      } catch (error) {
        if (this.stopping) throw new Stopping('door-gateway stopping');
        const delay = Math.min(5000, 100 * 2 ** attempt);
        this.log.warn({ err: error, retryInMs: delay }, 'door-gateway: retrying');
        await sleep(delay);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function definedOnly<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}
