// How a process stops on SIGINT (Ctrl-C) and SIGTERM (a deploy, `docker stop`): its own work
// first, cleanly; a second signal while it does gives up at once.
import os from 'node:os';
import { takeOverShutdownSignals } from './db/embedded-postgres.js';

/**
 * Calls `stop` on the first SIGINT or SIGTERM; a second one exits at once with 128 + its number
 * ('exit' listeners still run). An embedded PostgreSQL server's exit hook lets go of the two
 * signals: the caller stops that server itself, last. Returns what removes the listeners.
 */
export function onShutdownSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  let stopping = false;
  const listener = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(128 + os.constants.signals[signal]);
    stopping = true;
    stop(signal);
  };
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
  // After the listeners are on: with none for a moment, a signal then would end the process.
  takeOverShutdownSignals();
  return () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
}
