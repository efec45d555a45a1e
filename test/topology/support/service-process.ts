// One process of the production topology (a service's `node dist/<service>/main.js`, nginx, ...)
// run by a test: its output goes to a log file of its own (read back for readiness lines and
// for the reason when it fails), every wait has a deadline, and an exit while waiting fails the
// wait at once with the last lines the process wrote.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';

export interface ProcessSpec {
  /** A short name for messages and the log file (`command-1`, `nginx`). */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Where its stdout and stderr go (appended; one file per name across restarts). */
  readonly logFile: string;
}

export class ServiceProcess {
  private child: ChildProcess | null = null;
  private exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });
  /** Byte offset in the log file where the current run's output starts. */
  private runStart = 0;
  private starts = 0;

  constructor(readonly spec: ProcessSpec) {}

  get name(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when the current run ends. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exit;
  }

  /** Starts it (again); its output of this run is what waitFor reads. */
  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const fd = openSync(this.spec.logFile, 'a');
    this.runStart = fstatSync(fd).size;
    this.starts++;
    const child = spawn(this.spec.command, [...this.spec.args], { env: this.spec.env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.child = child;
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
  }

  /** What this run wrote so far. */
  output(): string {
    return readFrom(this.spec.logFile, this.runStart);
  }

  /** The last lines of this run's output, for an error message. */
  tail(lines = 30): string {
    return this.output().trimEnd().split('\n').slice(-lines).join('\n');
  }

  /**
   * Waits until this run's output matches `pattern`; fails at once when the process exits
   * first, and after `timeoutMs` otherwise, each time with its last lines.
   */
  async waitFor(pattern: RegExp, timeoutMs: number, what = pattern.source): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    void this.exit.then((e) => (exited = e));
    for (;;) {
      if (pattern.test(this.output())) return;
      if (exited || !this.running) {
        const e = exited ?? { code: this.child?.exitCode ?? null, signal: this.child?.signalCode ?? null };
        throw new Error(`${this.name} exited (code ${e.code}, signal ${e.signal}) before "${what}":\n${this.tail()}`);
      }
      if (Date.now() > deadline) throw new Error(`${this.name}: no "${what}" within ${timeoutMs} ms:\n${this.tail()}`);
      await sleep(50);
    }
  }

  /** SIGKILL: no clean-up, as a crash or the OOM killer; resolves once it is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGKILL');
    await this.exit;
  }

  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    await this.exit;
    clearTimeout(timer);
  }

  /** How many times it was started. */
  get startCount(): number {
    return this.starts;
  }
}

function readFrom(file: string, offset: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return '';
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it is true; fails after `timeoutMs` with `what` and the last detail it gave. */
export async function waitUntil(
  check: () => Promise<boolean | string> | boolean | string,
  timeoutMs: number,
  what: string | (() => string),
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let detail = '';
  for (;;) {
    const result = await check();
    if (result === true) return;
    if (typeof result === 'string') detail = result;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}${detail ? `: ${detail}` : ''}`);
    }
    await sleep(intervalMs);
  }
}
