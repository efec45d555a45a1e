// Runs a TypeScript entry in a child node process (through tsx) and waits for its "ready" line.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Child {
  readonly process: ChildProcess;
  /** SIGKILL: no clean-up, no goodbye; resolves once it has exited. */
  kill(): Promise<void>;
}

export async function startChild(entry: string, env: Record<string, string>, timeoutMs = 30_000): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, entry)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} before ready: ${stderr}`));
    });
  });
  return {
    process: child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
