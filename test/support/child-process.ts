// Runs a TypeScript entry point in a child node process (through tsx) and waits for a line of
// its output that says it is ready.
import { spawn, type ChildProcess } from 'node:child_process';

export interface Child {
  readonly process: ChildProcess;
  /** The exit code (null when a signal ended it), once it has exited. */
  readonly exited: Promise<number | null>;
  /** What it wrote so far, stdout and stderr (the last few kilobytes). */
  output(): string;
  /** SIGKILL: no clean-up, no goodbye; resolves once it has exited. */
  kill(): Promise<void>;
}

/**
 * Starts `entry` (a path) with exactly `env`; resolves once its output includes `ready`.
 * `processGroup`: in a process group of its own, as a command started from a terminal is (a
 * signal to the group, as Ctrl-C sends, reaches its children too).
 */
export async function startChild(
  entry: string,
  env: NodeJS.ProcessEnv,
  options: { ready?: string; timeoutMs?: number; processGroup?: boolean } = {},
): Promise<Child> {
  const { ready = 'ready', timeoutMs = 30_000, processGroup = false } = options;
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: processGroup });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready within ${timeoutMs} ms: ${output}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (output.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} before it was ready: ${output}`));
    });
  });
  return {
    process: child,
    exited,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
