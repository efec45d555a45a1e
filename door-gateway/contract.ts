// The door link contract, version 1: MQTT topics, payloads and the allow-list digest shared by
// the door-gateway, the controller simulator and real controllers. door-gateway/README.md is the
// normative description; this module is its executable form. Everything is MQTT 3.1.1, QoS 1.
import { createHash } from 'node:crypto';

export const CONTRACT_VERSION = 1;
export const TOPIC_ROOT = 'guestpass/v1';

/** Facility ids are the service's integers; credential ids are pass public ids. */
const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,128}$/;
const CONTROLLER_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export type ControllerLeaf = 'acks' | 'status' | 'sync' | 'access';

/**
 * The contract's topics under one root. A deployment that shares its MQTT broker with others
 * gives each its own root (MQTT_TOPIC_ROOT, for example `acme/guestpass/v1`); the default is
 * `guestpass/v1`. Controllers are configured with the same root.
 */
export function doorTopics(root: string = TOPIC_ROOT) {
  checkTopicRoot(root);
  const credentialTopic = new RegExp(`^${escapeRegExp(root)}/facilities/(\\d{1,10})/credentials/([^/]+)$`);
  const controllerTopic = new RegExp(`^${escapeRegExp(root)}/facilities/(\\d{1,10})/controllers/([^/]+)/(acks|status|sync|access)$`);
  return {
    root,
    /** Retained: the credential's current payload, or empty once revoked or expired. */
    credential: (facilityId: number, credentialId: string) => `${root}/facilities/${facilityId}/credentials/${checkCredentialId(credentialId)}`,
    credentialsOf: (facilityId: number) => `${root}/facilities/${facilityId}/credentials/+`,
    allCredentials: `${root}/facilities/+/credentials/+`,
    /** Not retained: revoke commands (and status requests) for every controller of the facility. */
    commands: (facilityId: number) => `${root}/facilities/${facilityId}/commands`,
    controller: (facilityId: number, controllerId: string, leaf: ControllerLeaf) =>
      `${root}/facilities/${facilityId}/controllers/${checkControllerId(controllerId)}/${leaf}`,
    allControllers: (leaf: ControllerLeaf) => `${root}/facilities/+/controllers/+/${leaf}`,
    /** Simulator only (not part of the controller contract): scan requests from `guestpass door scan`. */
    simulatorScan: (facilityId: number, controllerId: string) =>
      `${root}/facilities/${facilityId}/controllers/${checkControllerId(controllerId)}/simulator/scan`,
    simulatorScanReply: (requestId: string) => `${root}/simulator/scan-replies/${requestId}`,
    parseCredential(topic: string): { facilityId: number; credentialId: string } | null {
      const m = credentialTopic.exec(topic);
      if (!m || !CREDENTIAL_ID.test(m[2]!)) return null;
      return { facilityId: Number(m[1]), credentialId: m[2]! };
    },
    parseController(topic: string): { facilityId: number; controllerId: string; leaf: ControllerLeaf } | null {
      const m = controllerTopic.exec(topic);
      if (!m || !CONTROLLER_ID.test(m[2]!)) return null;
      return { facilityId: Number(m[1]), controllerId: m[2]!, leaf: m[3] as ControllerLeaf };
    },
  } as const;
}

export type DoorTopics = ReturnType<typeof doorTopics>;

/** The topics under the default root. */
export const topics = doorTopics();

/** A root is one or more non-empty levels without wildcards, not a `$` system topic. */
export function checkTopicRoot(root: string): string {
  if (!/^[^+#$/\u0000][^+#\u0000]{0,199}$/.test(root) || root.endsWith('/') || root.includes('//')) {
    throw new RangeError(`MQTT topic root ${JSON.stringify(root)} must be levels separated by "/", without wildcards, empty levels or a leading "$"`);
  }
  return root;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function isCredentialId(id: string): boolean {
  return CREDENTIAL_ID.test(id);
}

export function isControllerId(id: string): boolean {
  return CONTROLLER_ID.test(id);
}

function checkCredentialId(id: string): string {
  if (!CREDENTIAL_ID.test(id)) throw new RangeError(`credential id ${JSON.stringify(id)} is not topic-safe`);
  return id;
}

function checkControllerId(id: string): string {
  if (!CONTROLLER_ID.test(id)) throw new RangeError(`controller id ${JSON.stringify(id)} must match ${CONTROLLER_ID}`);
  return id;
}

export function parseCredentialTopic(topic: string): { facilityId: number; credentialId: string } | null {
  return topics.parseCredential(topic);
}

export function parseControllerTopic(topic: string): { facilityId: number; controllerId: string; leaf: ControllerLeaf } | null {
  return topics.parseController(topic);
}

// ---------------------------------------------------------------------------------------------
// Payloads (JSON, UTF-8). Every payload carries `v` (the contract version); receivers ignore
// fields they do not know, so additions stay within v1.

/** Retained on the credential topic. Controllers match scans by qr_sha256 and check the window. */
export interface CredentialPayload {
  readonly v: 1;
  readonly credential_id: string;
  readonly pass_id: number;
  /** SHA-256 of the QR value, lowercase hex. Controllers never receive the QR value itself. */
  readonly qr_sha256: string;
  /** ISO 8601 UTC; the credential opens doors when valid_from <= now < valid_until. */
  readonly valid_from: string;
  readonly valid_until: string;
  /** Strictly increasing per credential: a change with a version not above the held one is a duplicate. */
  readonly version: number;
}

export type RemovalReason = 'revoked' | 'expired';

/** On the facility's commands topic. */
export type Command =
  | {
      readonly v: 1;
      readonly type: 'revoke';
      readonly credential_id: string;
      readonly pass_id: number;
      /** Remove when the held version is <= this one. */
      readonly version: number;
      readonly reason: RemovalReason;
    }
  | { readonly v: 1; readonly type: 'report_status' };

/** Controller -> gateway, one per applied change (or duplicate). */
export type Ack =
  | {
      readonly v: 1;
      readonly op: 'upsert' | 'remove';
      readonly credential_id: string;
      readonly version: number;
      /** False when the change was a duplicate (already applied or older): nothing changed. */
      readonly applied: boolean;
      readonly at: string;
    }
  | {
      readonly v: 1;
      readonly op: 'sync';
      readonly sync_id: string;
      readonly digest: string;
      readonly credential_count: number;
      readonly at: string;
    };

/** Retained on the controller's status topic; the offline form is also its last will. */
export type Status =
  | {
      readonly v: 1;
      readonly state: 'online';
      readonly digest: string;
      readonly credential_count: number;
      readonly at: string;
      /** Set by the software simulator, which also answers `guestpass door scan`. */
      readonly simulator?: boolean;
    }
  | { readonly v: 1; readonly state: 'offline'; readonly at?: string };

/** Gateway -> one controller: the facility's whole allow-list, in chunks (not retained). */
export interface SyncChunk {
  readonly v: 1;
  readonly sync_id: string;
  /** 0-based. */
  readonly chunk: number;
  readonly chunks: number;
  /** Digest of the whole list after the sync; the controller checks it. */
  readonly digest: string;
  readonly credentials: ReadonlyArray<Omit<CredentialPayload, 'v'>>;
}

export type AccessResult = 'granted' | 'denied';
export type DenialReason = 'unknown_credential' | 'revoked' | 'expired' | 'not_yet_valid';
/** Which way the reader faces. Added within v1: absent means `entry` (controllers before exit readers). */
export type AccessDirection = 'entry' | 'exit';

/** Controller -> gateway: one per scan. access_id makes redeliveries recognisable end to end. */
export interface AccessEvent {
  readonly v: 1;
  readonly access_id: string;
  readonly door: string;
  /** Optional on the wire (`entry` when absent); always set once parsed by asAccessEvent. */
  readonly direction?: AccessDirection;
  readonly result: AccessResult;
  /** null when granted. */
  readonly reason: DenialReason | null;
  /** Known only when the scanned hash matched a held (or removed) credential. */
  readonly credential_id: string | null;
  readonly pass_id: number | null;
  readonly scanned_at: string;
}

/** Simulator only: a scan request from the CLI (the raw QR value stays on the scanning side). */
export interface ScanRequest {
  readonly v: 1;
  readonly request_id: string;
  readonly qr_sha256: string;
  readonly door: string;
  /** Scan at the controller's exit reader (`exit`) or entry reader; absent: the controller's own direction. */
  readonly direction?: AccessDirection;
  readonly reply_to: string;
}

export interface ScanReply {
  readonly v: 1;
  readonly request_id: string;
  readonly controller_id: string;
  readonly result: AccessResult;
  readonly reason: DenialReason | null;
  readonly credential_id: string | null;
  readonly access_id: string;
  readonly direction?: AccessDirection;
}

// ---------------------------------------------------------------------------------------------
// Allow-list digest: the sum modulo 2^256 of SHA-256("credential_id:version") over the held
// credentials, as 64 lowercase hex digits. Order-independent and updated in O(1) per change on
// both sides; the empty list is 64 zeros.

const MOD = 1n << 256n;

export function entryHash(credentialId: string, version: number): bigint {
  return BigInt('0x' + createHash('sha256').update(`${credentialId}:${version}`).digest('hex'));
}

export class AllowListDigest {
  private sum = 0n;

  add(credentialId: string, version: number): void {
    this.sum = (this.sum + entryHash(credentialId, version)) % MOD;
  }

  remove(credentialId: string, version: number): void {
    this.sum = (this.sum - entryHash(credentialId, version) + MOD) % MOD;
  }

  reset(): void {
    this.sum = 0n;
  }

  get hex(): string {
    return this.sum.toString(16).padStart(64, '0');
  }
}

export function digestOf(entries: Iterable<{ readonly credential_id: string; readonly version: number }>): string {
  const d = new AllowListDigest();
  for (const e of entries) d.add(e.credential_id, e.version);
  return d.hex;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Parsing of what arrives from the network: never trust a payload's shape.

export function parseJson(payload: Buffer): unknown {
  if (payload.length === 0) return null;
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
}

function isIso(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}

function isVersion(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

export function asCredential(value: unknown): CredentialPayload | null {
  const c = value as Partial<CredentialPayload> | null;
  if (!c || typeof c !== 'object') return null;
  if (typeof c.credential_id !== 'string' || !CREDENTIAL_ID.test(c.credential_id)) return null;
  if (!Number.isSafeInteger(c.pass_id) || typeof c.qr_sha256 !== 'string' || !SHA256_HEX.test(c.qr_sha256)) return null;
  if (!isIso(c.valid_from) || !isIso(c.valid_until) || !isVersion(c.version)) return null;
  return { ...c, v: 1 } as CredentialPayload;
}

export function asCommand(value: unknown): Command | null {
  const c = value as { type?: unknown } & Record<string, unknown>;
  if (!c || typeof c !== 'object') return null;
  if (c.type === 'report_status') return { v: 1, type: 'report_status' };
  if (c.type !== 'revoke') return null;
  if (typeof c.credential_id !== 'string' || !CREDENTIAL_ID.test(c.credential_id) || !isVersion(c.version)) return null;
  if (c.reason !== 'revoked' && c.reason !== 'expired') return null;
  return c as unknown as Command;
}

export function asAck(value: unknown): Ack | null {
  const a = value as Record<string, unknown>;
  if (!a || typeof a !== 'object' || !isIso(a.at)) return null;
  if (a.op === 'sync') {
    return typeof a.sync_id === 'string' && typeof a.digest === 'string' && Number.isSafeInteger(a.credential_count)
      ? (a as unknown as Ack)
      : null;
  }
  if (a.op !== 'upsert' && a.op !== 'remove') return null;
  if (typeof a.credential_id !== 'string' || !isVersion(a.version) || typeof a.applied !== 'boolean') return null;
  return a as unknown as Ack;
}

export function asStatus(value: unknown): Status | null {
  const s = value as Record<string, unknown>;
  if (!s || typeof s !== 'object') return null;
  if (s.state === 'offline') return { v: 1, state: 'offline', ...(isIso(s.at) ? { at: s.at } : {}) };
  if (s.state !== 'online' || typeof s.digest !== 'string' || !SHA256_HEX.test(s.digest)) return null;
  if (!Number.isSafeInteger(s.credential_count) || !isIso(s.at)) return null;
  return s as unknown as Status;
}

export function asSyncChunk(value: unknown): SyncChunk | null {
  const s = value as Record<string, unknown>;
  if (!s || typeof s !== 'object' || typeof s.sync_id !== 'string' || typeof s.digest !== 'string') return null;
  if (!Number.isSafeInteger(s.chunk) || !Number.isSafeInteger(s.chunks) || !Array.isArray(s.credentials)) return null;
  if ((s.chunk as number) < 0 || (s.chunk as number) >= (s.chunks as number)) return null;
  return s as unknown as SyncChunk;
}

const DENIAL_REASONS = new Set<string>(['unknown_credential', 'revoked', 'expired', 'not_yet_valid']);

function isDirection(value: unknown): value is AccessDirection {
  return value === 'entry' || value === 'exit';
}

/** The event with `reason` null when granted and `direction` filled in (`entry` when absent); null when malformed. */
export function asAccessEvent(value: unknown): (AccessEvent & { readonly direction: AccessDirection }) | null {
  const a = value as Record<string, unknown>;
  if (!a || typeof a !== 'object') return null;
  if (typeof a.access_id !== 'string' || !/^[0-9a-fA-F-]{36}$/.test(a.access_id)) return null;
  if (typeof a.door !== 'string' || a.door.length === 0 || a.door.length > 100) return null;
  if (a.result !== 'granted' && a.result !== 'denied') return null;
  if (a.result === 'denied' && !(typeof a.reason === 'string' && DENIAL_REASONS.has(a.reason))) return null;
  if (a.credential_id !== null && !(typeof a.credential_id === 'string' && CREDENTIAL_ID.test(a.credential_id))) return null;
  if (a.pass_id !== null && !Number.isSafeInteger(a.pass_id)) return null;
  if (!isIso(a.scanned_at)) return null;
  // Absent (a controller from before exit readers) is an entry; any other value is refused.
  if (a.direction !== undefined && !isDirection(a.direction)) return null;
  return {
    ...(a as unknown as AccessEvent),
    reason: a.result === 'granted' ? null : (a.reason as DenialReason),
    direction: a.direction === undefined ? 'entry' : a.direction,
  };
}

export function asScanRequest(value: unknown): ScanRequest | null {
  const r = value as Record<string, unknown>;
  if (!r || typeof r !== 'object') return null;
  if (typeof r.request_id !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(r.request_id)) return null;
  if (typeof r.qr_sha256 !== 'string' || !SHA256_HEX.test(r.qr_sha256)) return null;
  if (typeof r.door !== 'string' || typeof r.reply_to !== 'string' || !r.reply_to.startsWith(`${TOPIC_ROOT}/simulator/`)) return null;
  if (r.direction !== undefined && !isDirection(r.direction)) return null;
  return r as unknown as ScanRequest;
}
