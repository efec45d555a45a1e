// A door controller that follows contract v1 (README.md), in software: used by
// `guestpass door simulate`, the embedded default, the end-to-end tests and the benchmarks.
//
// It keeps the allow-list in memory (SHA-256 of QR values only), applies changes by version,
// acknowledges each, reports status with its digest (last will: offline), takes resyncs, and
// decides scans itself, window included, so expiry holds while it is offline. Each scan is
// reported with its reader's direction: the controller's own (`direction: 'exit'` makes it an
// exit reader), or the one a scan asks for (a door with a reader on each side).
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../shared/logger.js';
import {
  AllowListDigest,
  asCommand,
  asCredential,
  asScanRequest,
  asSyncChunk,
  parseJson,
  sha256Hex,
  doorTopics,
  type AccessDirection,
  type DoorTopics,
  type AccessEvent,
  type Ack,
  type Command,
  type CredentialPayload,
  type DenialReason,
  type RemovalReason,
  type ScanReply,
  type Status,
  type SyncChunk,
} from './contract.js';
import { connectLink, dropLink, endLink, firstConnect, publish, subscribe, type MqttClient } from './mqtt-link.js';

export interface ControllerSimulatorOptions {
  readonly url: string;
  readonly facilityId: number;
  readonly controllerId: string;
  /** The deployment's MQTT topic root (default `guestpass/v1`). */
  readonly topicRoot?: string;
  readonly door?: string;
  /** The direction of this controller's reader (default `entry`); `exit` reports every scan as an exit. */
  readonly direction?: AccessDirection;
  readonly logger?: Logger;
  /** Persistent session (default): changes made while offline wait in the broker. */
  readonly clean?: boolean;
  /** Quiet time after connecting before the first status report (default 250 ms). */
  readonly statusDebounceMs?: number;
  /** Periodic status report, so drift is noticed without a reconnect (default 30 s; 0 = off). */
  readonly statusIntervalMs?: number;
  /** Answer `guestpass door scan` requests (default true). */
  readonly acceptScanRequests?: boolean;
  readonly username?: string;
  readonly password?: string;
  readonly now?: () => Date;
}

export type HeldCredential = Omit<CredentialPayload, 'v'>;

export interface ScanOutcome {
  readonly result: 'granted' | 'denied';
  readonly reason: DenialReason | null;
  readonly credentialId: string | null;
  readonly passId: number | null;
  readonly accessId: string;
  readonly direction: AccessDirection;
  /** Resolves when the broker acknowledged the access event (waits while offline). */
  readonly reported: Promise<void>;
}

interface Tombstone {
  readonly version: number;
  readonly reason: RemovalReason;
  readonly qrHash: string | null;
  /** Removed by a cleared retained message; the revoke command that follows completes it. */
  readonly awaitingCommand?: boolean;
}

const MAX_TOMBSTONES = 200_000;

export class ControllerSimulator extends EventEmitter {
  readonly facilityId: number;
  readonly controllerId: string;
  private readonly held = new Map<string, HeldCredential>();
  private readonly byHash = new Map<string, string>();
  private readonly tombstones = new Map<string, Tombstone>();
  private readonly tombstoneByHash = new Map<string, string>();
  private readonly digest = new AllowListDigest();
  private sync: { id: string; parts: Array<SyncChunk['credentials'] | undefined>; received: number } | null = null;
  private client: MqttClient | null = null;
  private statusTimer: NodeJS.Timeout | null = null;
  private intervalTimer: NodeJS.Timeout | null = null;
  private readonly now: () => Date;
  private readonly door: string;
  private readonly topics: DoorTopics;
  readonly direction: AccessDirection;

  constructor(private readonly options: ControllerSimulatorOptions) {
    super();
    this.facilityId = options.facilityId;
    this.controllerId = options.controllerId;
    this.door = options.door ?? 'main';
    this.direction = options.direction ?? 'entry';
    this.now = options.now ?? (() => new Date());
    this.topics = doorTopics(options.topicRoot);
    this.topics.controller(this.facilityId, this.controllerId, 'status'); // validates the ids early
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  get credentialCount(): number {
    return this.held.size;
  }

  get digestHex(): string {
    return this.digest.hex;
  }

  holds(credentialId: string): HeldCredential | undefined {
    return this.held.get(credentialId);
  }

  /** Credential ids held, sorted. */
  heldIds(): string[] {
    return [...this.held.keys()].sort();
  }

  async start(timeoutMs = 10_000): Promise<void> {
    if (this.client) throw new Error('controller already started');
    const offline: Status = { v: 1, state: 'offline' };
    const client = connectLink({
      url: this.options.url,
      clientId: `guestpass-controller-${this.facilityId}-${this.controllerId}`,
      clean: this.options.clean ?? false,
      will: { topic: this.topics.controller(this.facilityId, this.controllerId, 'status'), payload: JSON.stringify(offline), retain: true },
      ...(this.options.username ? { username: this.options.username } : {}),
      ...(this.options.password ? { password: this.options.password } : {}),
    });
    this.client = client;
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
    client.on('connect', () => {
      const wanted = [
        this.topics.credentialsOf(this.facilityId),
        this.topics.commands(this.facilityId),
        this.topics.controller(this.facilityId, this.controllerId, 'sync'),
      ];
      if (this.options.acceptScanRequests ?? true) wanted.push(this.topics.simulatorScan(this.facilityId, this.controllerId));
      // With a resumed session these are already in place; subscribing again is harmless.
      subscribe(client, wanted)
        .then(() => this.scheduleStatus())
        .catch((error) => this.options.logger?.warn({ err: error }, 'controller subscription failed'));
    });
    client.on('error', (error) => this.options.logger?.debug({ err: error, controller: this.controllerId }, 'controller MQTT error'));
    const interval = this.options.statusIntervalMs ?? 30_000;
    if (interval > 0) {
      this.intervalTimer = setInterval(() => this.publishStatus(), interval);
      this.intervalTimer.unref();
    }
    await firstConnect(client, timeoutMs);
  }

  /** Goes offline politely: reports offline, then disconnects. The session (and queued changes) stays. */
  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.clearTimers();
    if (client.connected) {
      const offline: Status = { v: 1, state: 'offline', at: this.now().toISOString() };
      await Promise.race([publish(client, this.topics.controller(this.facilityId, this.controllerId, 'status'), JSON.stringify(offline), true), sleep(1000)]);
    }
    await endLink(client, 1000);
    this.client = null;
  }

  /** Drops the connection abruptly (power cut): the broker publishes the last will. Memory is kept. */
  async crash(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.clearTimers();
    await dropLink(client);
    this.client = null;
  }

  /**
   * Decides a scan locally and reports it as an access event. Give the QR value or its SHA-256.
   * The reader's direction is the controller's own unless the scan names one.
   */
  scan(input: { qrValue?: string; qrHash?: string }, at: Date = this.now(), door = this.door, direction = this.direction): ScanOutcome {
    const hash = input.qrHash ?? sha256Hex(input.qrValue ?? '');
    const accessId = randomUUID();
    let result: 'granted' | 'denied' = 'denied';
    let reason: DenialReason | null = 'unknown_credential';
    let credentialId: string | null = null;
    let passId: number | null = null;
    const heldId = this.byHash.get(hash);
    const held = heldId ? this.held.get(heldId) : undefined;
    if (held) {
      credentialId = held.credential_id;
      passId = held.pass_id;
      const t = at.getTime();
      if (t < Date.parse(held.valid_from)) reason = 'not_yet_valid';
      else if (t >= Date.parse(held.valid_until)) reason = 'expired';
      else {
        result = 'granted';
        reason = null;
      }
    } else {
      const tombId = this.tombstoneByHash.get(hash);
      const tomb = tombId ? this.tombstones.get(tombId) : undefined;
      if (tomb && tombId) {
        credentialId = tombId;
        reason = tomb.reason;
      }
    }
    const event: AccessEvent = {
      v: 1,
      access_id: accessId,
      door,
      direction,
      result,
      reason,
      credential_id: credentialId,
      pass_id: passId,
      scanned_at: at.toISOString(),
    };
    const reported = this.client
      ? publish(this.client, this.topics.controller(this.facilityId, this.controllerId, 'access'), JSON.stringify(event), false)
      : Promise.reject(new Error('controller not started'));
    reported.catch(() => undefined);
    this.emit('scan', event);
    return { result, reason, credentialId, passId, accessId, direction, reported };
  }

  /** Resolves when `predicate` holds, checked after every applied change; rejects after `timeoutMs`. */
  waitFor(predicate: (c: this) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate(this)) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`controller ${this.controllerId}: timed out waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.off('changed', check);
      };
      this.on('changed', check);
    });
  }

  // -------------------------------------------------------------------------------------------

  private onMessage(topic: string, payload: Buffer): void {
    const credentialTopic = this.topics.parseCredential(topic);
    if (credentialTopic) {
      if (credentialTopic.facilityId !== this.facilityId) return;
      if (payload.length === 0) {
        // The retained copy was cleared; the revoke command that follows carries the version.
        const current = this.held.get(credentialTopic.credentialId);
        if (current) {
          const expired = Date.parse(current.valid_until) <= this.now().getTime();
          this.dropHeld(current);
          this.setTombstone(current.credential_id, {
            version: current.version,
            reason: expired ? 'expired' : 'revoked',
            qrHash: current.qr_sha256,
            awaitingCommand: true,
          });
          this.changed();
        }
        return;
      }
      const c = asCredential(parseJson(payload));
      if (c && c.credential_id === credentialTopic.credentialId) this.upsert(c);
      return;
    }
    if (topic === this.topics.commands(this.facilityId)) {
      const command = asCommand(parseJson(payload));
      if (command) this.onCommand(command);
      return;
    }
    if (topic === this.topics.controller(this.facilityId, this.controllerId, 'sync')) {
      const chunk = asSyncChunk(parseJson(payload));
      if (chunk) this.onSyncChunk(chunk);
      return;
    }
    if (topic === this.topics.simulatorScan(this.facilityId, this.controllerId)) {
      const request = asScanRequest(parseJson(payload));
      if (!request || !this.client) return;
      const outcome = this.scan({ qrHash: request.qr_sha256 }, this.now(), request.door || this.door, request.direction ?? this.direction);
      const reply: ScanReply = {
        v: 1,
        request_id: request.request_id,
        controller_id: this.controllerId,
        result: outcome.result,
        reason: outcome.reason,
        credential_id: outcome.credentialId,
        access_id: outcome.accessId,
        direction: outcome.direction,
      };
      publish(this.client, request.reply_to, JSON.stringify(reply), false).catch(() => undefined);
    }
  }

  private upsert(c: CredentialPayload): void {
    const { v: _v, ...entry } = c;
    const current = this.held.get(c.credential_id);
    const tomb = this.tombstones.get(c.credential_id);
    if ((current && c.version <= current.version) || (tomb && c.version <= tomb.version)) {
      this.ack({ v: 1, op: 'upsert', credential_id: c.credential_id, version: c.version, applied: false, at: this.now().toISOString() });
      return;
    }
    if (current) this.dropHeld(current);
    if (tomb) this.dropTombstone(c.credential_id, tomb);
    this.held.set(entry.credential_id, entry);
    this.byHash.set(entry.qr_sha256, entry.credential_id);
    this.digest.add(entry.credential_id, entry.version);
    this.ack({ v: 1, op: 'upsert', credential_id: c.credential_id, version: c.version, applied: true, at: this.now().toISOString() });
    this.changed();
  }

  private onCommand(command: Command): void {
    if (command.type === 'report_status') {
      this.publishStatus();
      return;
    }
    // The command completes a removal the cleared retained message began: that is its application.
    const completes = this.tombstones.get(command.credential_id)?.awaitingCommand === true;
    const applied = this.removeHeld(command.credential_id, command.version, command.reason, true) || completes;
    this.ack({ v: 1, op: 'remove', credential_id: command.credential_id, version: command.version, applied, at: this.now().toISOString() });
  }

  /** Removes a held credential at or below `version` and remembers why; true when something changed. */
  private removeHeld(credentialId: string, version: number, reason: RemovalReason, tombstoneIfAbsent: boolean): boolean {
    const current = this.held.get(credentialId);
    if (current && current.version > version) return false;
    const tomb = this.tombstones.get(credentialId);
    if (!current) {
      if (tombstoneIfAbsent && (!tomb || tomb.version <= version || tomb.awaitingCommand)) {
        this.setTombstone(credentialId, { version: Math.max(version, tomb?.version ?? -1), reason, qrHash: tomb?.qrHash ?? null });
      }
      return false;
    }
    this.dropHeld(current);
    this.setTombstone(credentialId, { version: Math.max(version, current.version), reason, qrHash: current.qr_sha256 });
    this.changed();
    return true;
  }

  private onSyncChunk(chunk: SyncChunk): void {
    if (!this.sync || this.sync.id !== chunk.sync_id) this.sync = { id: chunk.sync_id, parts: new Array(chunk.chunks).fill(undefined), received: 0 };
    const sync = this.sync;
    if (sync.parts[chunk.chunk] === undefined) {
      sync.parts[chunk.chunk] = chunk.credentials;
      sync.received++;
    }
    if (sync.received < sync.parts.length) return;
    this.sync = null;
    const incoming = new Map<string, HeldCredential>();
    for (const part of sync.parts) for (const c of part ?? []) incoming.set(c.credential_id, c);
    const nowMs = this.now().getTime();
    for (const current of [...this.held.values()]) {
      if (incoming.has(current.credential_id)) continue;
      this.dropHeld(current);
      const reason: RemovalReason = Date.parse(current.valid_until) <= nowMs ? 'expired' : 'revoked';
      this.setTombstone(current.credential_id, { version: current.version, reason, qrHash: current.qr_sha256 });
    }
    for (const c of incoming.values()) {
      const current = this.held.get(c.credential_id);
      if (current?.version === c.version) continue;
      if (current) this.dropHeld(current);
      const tomb = this.tombstones.get(c.credential_id);
      if (tomb) this.dropTombstone(c.credential_id, tomb);
      this.held.set(c.credential_id, c);
      this.byHash.set(c.qr_sha256, c.credential_id);
      this.digest.add(c.credential_id, c.version);
    }
    if (this.digest.hex !== chunk.digest) {
      this.options.logger?.warn({ controller: this.controllerId, expected: chunk.digest, actual: this.digest.hex }, 'digest differs after resync');
    }
    this.ack({ v: 1, op: 'sync', sync_id: chunk.sync_id, digest: this.digest.hex, credential_count: this.held.size, at: this.now().toISOString() });
    this.changed();
    this.emit('synced', { syncId: chunk.sync_id, credentials: this.held.size });
    this.publishStatus();
  }

  private dropHeld(c: HeldCredential): void {
    this.held.delete(c.credential_id);
    if (this.byHash.get(c.qr_sha256) === c.credential_id) this.byHash.delete(c.qr_sha256);
    this.digest.remove(c.credential_id, c.version);
  }

  private setTombstone(credentialId: string, tomb: Tombstone): void {
    this.tombstones.delete(credentialId);
    this.tombstones.set(credentialId, tomb);
    if (tomb.qrHash) this.tombstoneByHash.set(tomb.qrHash, credentialId);
    if (this.tombstones.size > MAX_TOMBSTONES) {
      const [oldestId, oldest] = this.tombstones.entries().next().value as [string, Tombstone];
      this.dropTombstone(oldestId, oldest);
    }
  }

  private dropTombstone(credentialId: string, tomb: Tombstone): void {
    this.tombstones.delete(credentialId);
    if (tomb.qrHash && this.tombstoneByHash.get(tomb.qrHash) === credentialId) this.tombstoneByHash.delete(tomb.qrHash);
  }

  private changed(): void {
    this.emit('changed');
    // While changes keep arriving right after a connect, the status waits for them to settle.
    if (this.statusTimer) this.scheduleStatus();
  }

  private ack(ack: Ack): void {
    if (!this.client) return;
    publish(this.client, this.topics.controller(this.facilityId, this.controllerId, 'acks'), JSON.stringify(ack), false).catch(() => undefined);
    this.emit('ack', ack);
  }

  private scheduleStatus(): void {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => {
      this.statusTimer = null;
      this.publishStatus();
    }, this.options.statusDebounceMs ?? 250);
  }

  private publishStatus(): void {
    if (!this.client?.connected) return;
    const status: Status = {
      v: 1,
      state: 'online',
      digest: this.digest.hex,
      credential_count: this.held.size,
      at: this.now().toISOString(),
      ...((this.options.acceptScanRequests ?? true) ? { simulator: true } : {}),
    };
    publish(this.client, this.topics.controller(this.facilityId, this.controllerId, 'status'), JSON.stringify(status), true).catch(() => undefined);
    this.emit('status', status);
  }

  private clearTimers(): void {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    if (this.intervalTimer) clearInterval(this.intervalTimer);
    this.statusTimer = null;
    this.intervalTimer = null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
