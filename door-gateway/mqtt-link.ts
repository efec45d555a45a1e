// MQTT client settings shared by the gateway and the simulator: MQTT 3.1.1 (aedes does not speak
// 5), reconnecting for ever, and promise helpers whose publish resolves on the broker's PUBACK.
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';

export type { MqttClient };

export interface LinkOptions {
  readonly url: string;
  readonly clientId: string;
  /** false: a persistent session, so QoS 1 messages sent while we are away wait in the broker. */
  readonly clean: boolean;
  readonly will?: { readonly topic: string; readonly payload: string; readonly retain: boolean };
  readonly keepaliveSeconds?: number;
  readonly username?: string;
  readonly password?: string;
}

export function connectLink(options: LinkOptions): MqttClient {
  const opts: IClientOptions = {
    clientId: options.clientId,
    clean: options.clean,
    protocolVersion: 4,
    // A dead broker is noticed within ~1.5 keepalives; then reconnect attempts every 500 ms.
    keepalive: options.keepaliveSeconds ?? 10,
    reconnectPeriod: 500,
    connectTimeout: 5000,
    resubscribe: true,
    // QoS 1 publishes made while offline are queued and sent on reconnect; their promises wait.
    queueQoSZero: false,
    ...(options.will ? { will: { topic: options.will.topic, payload: Buffer.from(options.will.payload), qos: 1, retain: options.will.retain } } : {}),
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: options.password } : {}),
  };
  const client = mqtt.connect(options.url, opts);
  // mqtt.js leaves Nagle's algorithm on: a lone PUBLISH or PUBACK would wait for the peer's
  // delayed ACK (~40 ms). Each reconnection makes a new socket, so set it on every connect.
  const noDelay = () => (client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
  client.on('connect', noDelay);
  return client;
}

/** Resolves on the first successful connection; rejects after `timeoutMs` (the client keeps retrying). */
export function firstConnect(client: MqttClient, timeoutMs: number): Promise<void> {
  if (client.connected) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('connect', onConnect);
      reject(new Error(`MQTT broker not reachable within ${timeoutMs} ms`));
    }, timeoutMs);
    const onConnect = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('connect', onConnect);
  });
}

/** QoS 1 publish; resolves when the broker acknowledged it (PUBACK), however long that takes. */
export function publish(client: MqttClient, topic: string, payload: string | Buffer, retain: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    client.publish(topic, payload, { qos: 1, retain }, (error) => (error ? reject(error) : resolve()));
  });
}

export function subscribe(client: MqttClient, topics: readonly string[], qos: 0 | 1 = 1): Promise<void> {
  return new Promise((resolve, reject) => {
    client.subscribe([...topics], { qos }, (error, granted) => {
      if (error) return reject(error);
      const refused = granted?.find((g) => g.qos === 128);
      if (refused) return reject(new Error(`broker refused subscription to ${refused.topic}`));
      resolve();
    });
  });
}

export function unsubscribe(client: MqttClient, topics: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    client.unsubscribe([...topics], (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * Graceful end (a DISCONNECT: no last will) once in-flight publishes are acknowledged; forced
 * after `graceMs`, since a graceful end waits for ever while the broker is unreachable.
 */
export function endLink(client: MqttClient, graceMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      // A second end() is ignored while the first is pending: drop the socket directly.
      (client as unknown as { stream?: { destroy(): void } }).stream?.destroy();
      resolve();
    }, graceMs);
    client.end(false, {}, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Abrupt end (socket dropped: the broker publishes the last will), for tests of crashes. */
export function dropLink(client: MqttClient): Promise<void> {
  return new Promise((resolve) => client.end(true, {}, () => resolve()));
}
