// The operator CLI against the running topology's database, with the services' environment
// (their secrets and key-encryption keys): in this process through its main() for the seeding
// commands (each is a whole `npx guestpass ... --json` run, minus the process start), and as its
// own process, as an operator runs it, for the projection rebuild.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { main } from '../../../cli/guestpass.js';
import { ROOT } from './nginx-gateway.js';

export class OperatorCli {
  constructor(private readonly env: Readonly<Record<string, string>>) {}

  /** `guestpass ARGS --json` in this process; resolves with its JSON answer, fails with its error. */
  async run<T = any>(...args: string[]): Promise<T> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main([...args, '--json'], { out: (line) => void out.push(line), err: (line) => void err.push(line) }, { ...this.env });
    if (code !== 0) throw new Error(`guestpass ${args.join(' ')} exited with ${code}: ${out.join('\n')} ${err.join('\n')}`.trim());
    return JSON.parse(out.at(-1) ?? 'null') as T;
  }

  /** `npx guestpass ARGS --json` as a process of its own (bin/guestpass.js), with a deadline. */
  spawn<T = any>(args: readonly string[], timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/guestpass.js'), ...args, '--json'], {
        env: { ...this.env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', reject);
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code !== 0) {
          return reject(new Error(`guestpass ${args.join(' ')}: ${signal ? `killed after ${timeoutMs} ms` : `exit ${code}`}: ${stdout.slice(-3000)} ${stderr.slice(-2000)}`));
        }
        try {
          resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as T);
        } catch {
          reject(new Error(`guestpass ${args.join(' ')} printed no JSON: ${stdout} ${stderr.slice(-2000)}`));
        }
      });
    });
  }
}
