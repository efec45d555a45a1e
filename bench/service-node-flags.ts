// The V8 flags the service's processes run with (package.json `start`, bin/guestpass.js, the
// Dockerfile's NODE_OPTIONS): a bench that measures the service in its own process runs with
// them too, re-starting itself with them when it was started without.
import { spawnSync } from 'node:child_process';

export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=64'] as const;

/** True when this process was started with the service's flags; else runs itself again with them and exits. */
export function withServiceNodeFlags(): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (SERVICE_NODE_FLAGS.every((flag) => given.includes(flag))) return;
  const { status } = spawnSync(process.execPath, [...SERVICE_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(status ?? 1);
}
