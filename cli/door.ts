// `npx guestpass door simulate|scan`: software door controllers for demos, tests and benchmarks.
//
//   door simulate --facility ID [--controllers N] [--exit]
//                                                    runs N controllers (exit readers with --exit) until Ctrl-C
//   door scan --facility ID --qr=VALUE [--controller ID] [--door NAME] [--exit]
//                                                    asks a running simulated controller to scan
//                                                    (at its exit reader with --exit: checks a checked-in guest out)
//
// The broker is MQTT_URL, else the embedded one a running `npm start` recorded in the data folder.
// `scan` hashes the QR value here: only its SHA-256 travels over MQTT, as with real readers.
import { randomUUID } from 'node:crypto';
import type { Config } from '../shared/config.js';
import { ControllerSimulator } from '../door-gateway/controller-simulator.js';
import { readEmbeddedBrokerUrl } from '../door-gateway/embedded-broker.js';
import {
  asStatus,
  isControllerId,
  parseControllerTopic,
  parseJson,
  sha256Hex,
  topics,
  type AccessDirection,
  type DenialReason,
  type ScanReply,
  type ScanRequest,
} from '../door-gateway/contract.js';
import { connectLink, endLink, firstConnect, publish, subscribe, type MqttClient } from '../door-gateway/mqtt-link.js';
import { integerArg, noPositionals, optional, parse, required, UsageError } from './cli-args.js';

export interface DoorCliIo {
  out(line: string): void;
  err(line: string): void;
  /** Ends `door simulate` (default: SIGINT or SIGTERM). */
  readonly until?: Promise<void>;
}

export class DoorCliError extends Error {
  override readonly name = 'DoorCliError';
}

export const DOOR_USAGE = `usage:
  guestpass door simulate --facility ID [--controllers N] [--exit] [--json]
  guestpass door scan --facility ID --qr=VALUE [--controller ID] [--door NAME] [--exit] [--json]`;

/** The broker controllers and the CLI talk to: MQTT_URL, else the embedded broker of a running server. */
export async function resolveMqttUrl(config: Pick<Config, 'mqttUrl' | 'dataDir'>): Promise<string> {
  if (config.mqttUrl) return config.mqttUrl;
  const embedded = await readEmbeddedBrokerUrl(config.dataDir);
  if (embedded) return embedded;
  throw new DoorCliError('no MQTT broker: set MQTT_URL, or start the server (npm start) to use its embedded broker');
}

export interface Simulation {
  readonly controllers: readonly ControllerSimulator[];
  stop(): Promise<void>;
}

/** Starts `count` simulated controllers (`cli-{facility}-{n}`) for a facility; exit readers with `direction: 'exit'`. */
export async function simulateDoors(options: {
  url: string;
  facilityId: number;
  count: number;
  direction?: AccessDirection;
  timeoutMs?: number;
}): Promise<Simulation> {
  const controllers: ControllerSimulator[] = [];
  try {
    for (let i = 1; i <= options.count; i++) {
      const controller = new ControllerSimulator({
        url: options.url,
        facilityId: options.facilityId,
        controllerId: `cli-${options.facilityId}-${i}`,
        ...(options.direction ? { direction: options.direction } : {}),
        // Clean sessions: a simulator's memory ends with its process, so no session should outlive it.
        clean: true,
      });
      await controller.start(options.timeoutMs ?? 10_000);
      controllers.push(controller);
    }
  } catch (error) {
    await Promise.all(controllers.map((c) => c.stop()));
    throw new DoorCliError(`cannot connect to the MQTT broker: ${(error as Error).message}`);
  }
  return { controllers, stop: async () => void (await Promise.all(controllers.map((c) => c.stop()))) };
}

export interface ScanResult {
  readonly result: 'granted' | 'denied';
  readonly reason: DenialReason | null;
  readonly controllerId: string;
  readonly credentialId: string | null;
  readonly accessId: string;
  /** The reader's direction the controller reported the scan with. */
  readonly direction: AccessDirection;
}

/**
 * Asks a simulated controller of the facility to scan a QR value. Without `controllerId`, picks
 * an online simulator from the retained statuses (sorted by id). `direction: 'exit'` scans at
 * its exit reader; without it the controller scans as what it is (an entry reader by default).
 */
export async function scanAtDoor(options: {
  url: string;
  facilityId: number;
  qrValue: string;
  controllerId?: string;
  door?: string;
  direction?: AccessDirection;
  timeoutMs?: number;
}): Promise<ScanResult> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const client = connectLink({ url: options.url, clientId: `guestpass-cli-${randomUUID().slice(0, 12)}`, clean: true });
  try {
    await firstConnect(client, timeoutMs).catch((error: Error) => {
      throw new DoorCliError(`cannot connect to the MQTT broker: ${error.message}`);
    });
    const controllerId = options.controllerId ?? (await findSimulator(client, options.facilityId));
    if (!isControllerId(controllerId)) throw new DoorCliError(`controller id ${JSON.stringify(controllerId)} is not valid`);
    const requestId = randomUUID();
    const replyTopic = topics.simulatorScanReply(requestId);
    const reply = new Promise<ScanReply>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new DoorCliError(`controller ${controllerId} of facility ${options.facilityId} did not answer within ${timeoutMs} ms (is \`guestpass door simulate\` or the server running?)`)),
        timeoutMs,
      );
      client.on('message', (topic, payload) => {
        if (topic !== replyTopic) return;
        const body = parseJson(payload) as ScanReply | null;
        if (body?.request_id !== requestId) return;
        clearTimeout(timer);
        resolve(body);
      });
    });
    reply.catch(() => undefined);
    await subscribe(client, [replyTopic]);
    const request: ScanRequest = {
      v: 1,
      request_id: requestId,
      qr_sha256: sha256Hex(options.qrValue),
      door: options.door ?? 'main',
      ...(options.direction ? { direction: options.direction } : {}),
      reply_to: replyTopic,
    };
    await publish(client, topics.simulatorScan(options.facilityId, controllerId), JSON.stringify(request), false);
    const answer = await reply;
    return {
      result: answer.result,
      reason: answer.reason,
      controllerId: answer.controller_id,
      credentialId: answer.credential_id,
      accessId: answer.access_id,
      // A simulator from before exit readers scanned at its (entry) reader whatever was asked.
      direction: answer.direction === 'exit' ? 'exit' : 'entry',
    };
  } finally {
    await endLink(client, 500);
  }
}

async function findSimulator(client: MqttClient, facilityId: number): Promise<string> {
  const online: string[] = [];
  client.on('message', (topic, payload) => {
    const where = parseControllerTopic(topic);
    if (!where || where.leaf !== 'status' || where.facilityId !== facilityId) return;
    const status = asStatus(parseJson(payload));
    if (status?.state === 'online' && status.simulator) online.push(where.controllerId);
  });
  await subscribe(client, [`guestpass/v1/facilities/${facilityId}/controllers/+/status`]);
  await new Promise((resolve) => setTimeout(resolve, 300)); // retained statuses arrive right after SUBACK
  const found = [...new Set(online)].sort()[0];
  if (!found) throw new DoorCliError(`no simulated controller is online for facility ${facilityId} (start one with \`guestpass door simulate --facility ${facilityId}\`)`);
  return found;
}

function describeScan(r: ScanResult): string {
  const where = r.direction === 'exit' ? `exit reader, controller ${r.controllerId}` : `controller ${r.controllerId}`;
  return r.result === 'granted' ? `granted (${where})` : `denied: ${r.reason} (${where})`;
}

function flag(values: object, name: string): boolean {
  return (values as Record<string, unknown>)[name] === true;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

/** `guestpass door ...`: returns the exit code (0 when the command did its work, 1 on an error, 2 on bad usage). */
export async function doorCommand(args: string[], config: Pick<Config, 'mqttUrl' | 'dataDir'>, io: DoorCliIo): Promise<number> {
  const [sub, ...rest] = args;
  // Known before parsing, so even a parse error is answered in JSON.
  const json = args.includes('--json');
  try {
    if (sub === 'simulate') {
      const { values, positionals } = parse(rest, { facility: { type: 'string' }, controllers: { type: 'string' }, exit: { type: 'boolean' } });
      noPositionals(positionals);
      const facilityId = integerArg(required(values, 'facility'), '--facility');
      const count = integerArg(optional(values, 'controllers') ?? '1', '--controllers');
      if (count > 100) throw new UsageError('--controllers must be at most 100');
      const url = await resolveMqttUrl(config);
      const direction: AccessDirection = flag(values, 'exit') ? 'exit' : 'entry';
      const simulation = await simulateDoors({ url, facilityId, count, direction });
      const ids = simulation.controllers.map((c) => c.controllerId);
      if (values.json) io.out(JSON.stringify({ facility_id: facilityId, controllers: ids, direction, mqtt_url: redact(url) }));
      else {
        const kind = direction === 'exit' ? 'exit reader controller(s)' : 'controller(s)';
        io.out(`simulating ${count} ${kind} for facility ${facilityId} on ${redact(url)}: ${ids.join(', ')}`);
        io.out('scan with: guestpass door scan --facility ' + facilityId + ' --qr=VALUE   (Ctrl-C to stop)');
        for (const c of simulation.controllers) {
          c.on('synced', (e: { credentials: number }) => io.out(`${c.controllerId}: resynced, ${e.credentials} credential(s)`));
          c.on('scan', (e: { result: string; reason: string | null; direction?: string }) =>
            io.out(`${c.controllerId}: ${e.direction === 'exit' ? 'exit ' : ''}scan ${e.result}${e.reason ? ` (${e.reason})` : ''}`),
          );
        }
      }
      await (io.until ?? untilSignal());
      await simulation.stop();
      return 0;
    }
    if (sub === 'scan') {
      const { values, positionals } = parse(rest, {
        facility: { type: 'string' },
        qr: { type: 'string' },
        controller: { type: 'string' },
        door: { type: 'string' },
        exit: { type: 'boolean' },
      });
      noPositionals(positionals);
      const facilityId = integerArg(required(values, 'facility'), '--facility');
      const qrValue = required(values, 'qr');
      const controllerId = optional(values, 'controller');
      const door = optional(values, 'door');
      const url = await resolveMqttUrl(config);
      const result = await scanAtDoor({
        url,
        facilityId,
        qrValue,
        ...(controllerId ? { controllerId } : {}),
        ...(door ? { door } : {}),
        ...(flag(values, 'exit') ? { direction: 'exit' as const } : {}),
      });
      io.out(
        values.json
          ? JSON.stringify({
              result: result.result,
              reason: result.reason,
              direction: result.direction,
              controller_id: result.controllerId,
              credential_id: result.credentialId,
              access_id: result.accessId,
            })
          : describeScan(result),
      );
      return 0;
    }
    throw new UsageError(sub ? `unknown door command "${sub}"` : 'door needs a command');
  } catch (error) {
    // The convention of the other commands (cli/guestpass.ts): with --json one error object on
    // stdout, else `guestpass: message` on stderr.
    if (error instanceof UsageError) {
      if (json) io.out(JSON.stringify({ error: 'usage', message: error.message }));
      else io.err(`guestpass: ${error.message}\n${DOOR_USAGE}`);
      return 2;
    }
    if (error instanceof DoorCliError) {
      if (json) io.out(JSON.stringify({ error: 'failed', message: error.message }));
      else io.err(`guestpass: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
