// The embedded MQTT broker of the default setup (no MQTT_URL): aedes, in memory, on loopback.
// Its URL is written to the data folder so `guestpass door scan|simulate` in another terminal
// finds it, as the CLI finds the embedded PostgreSQL.
import net from 'node:net';
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Aedes } from 'aedes';

export interface EmbeddedBroker {
  readonly url: string;
  /** Drops every client connection (tests: a broker restart as seen by clients). */
  dropClients(): void;
  close(): Promise<void>;
}

export function embeddedBrokerUrlFile(dataDir: string): string {
  return path.join(dataDir, 'mqtt.url');
}

export async function readEmbeddedBrokerUrl(dataDir: string): Promise<string | null> {
  try {
    return (await readFile(embeddedBrokerUrlFile(dataDir), 'utf8')).trim() || null;
  } catch {
    return null;
  }
}

export async function startEmbeddedBroker(options: { host?: string; port?: number; dataDir?: string } = {}): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true); // PUBACKs and deliveries go out at once (see mqtt-link.ts)
    socket.on('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const url = `mqtt://${host}:${port}`;
  // Removed on close() and on an exit that skips it (a second Ctrl-C exits at once), so the door
  // CLI is not left the address of a broker that is gone; only while it is still this broker's
  // (another process may have started in the same data folder since).
  const forgetUrl = () => {
    if (!options.dataDir) return;
    const file = embeddedBrokerUrlFile(options.dataDir);
    try {
      if (readFileSync(file, 'utf8').trim() === url) rmSync(file, { force: true });
    } catch {
      // gone already, or unreadable: nothing of ours to remove
    }
  };
  if (options.dataDir) {
    try {
      // The data folder may not exist yet: a first `npm start` with DATABASE_URL creates nothing else there.
      await mkdir(options.dataDir, { recursive: true });
      await writeFile(embeddedBrokerUrlFile(options.dataDir), url + '\n', { mode: 0o600 });
      process.once('exit', forgetUrl);
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      throw error;
    }
  }
  return {
    url,
    dropClients() {
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      process.off('exit', forgetUrl);
      forgetUrl();
    },
  };
}
