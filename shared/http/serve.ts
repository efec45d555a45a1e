// Runs an HTTP service as its own process until SIGINT or SIGTERM, then closes it cleanly.
import http from 'node:http';
import type { Logger } from '../logger.js';
import { onShutdownSignal } from '../shutdown-signal.js';

export function serveUntilSignalled(
  listener: http.RequestListener,
  options: { readonly host: string; readonly port: number; readonly logger: Logger; readonly name: string; readonly close: () => Promise<void> },
): void {
  const { host, port, logger, name } = options;
  const server = http.createServer(listener);
  server.listen(port, host, () => logger.info({ host, port }, `${name} listening`));
  const stop = async (signal: string) => {
    logger.info({ signal }, 'stopping');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await options.close();
    process.exit(0);
  };
  onShutdownSignal((signal) => void stop(signal));
}
