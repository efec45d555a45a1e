// Member import at scale: `npx tsx bench/member-import.ts [--rows 200000]`.
// Writes a CSV of `rows` members (every column filled, unique emails), then runs
// `npx guestpass member import` as an operator does (the package's bin, its own process) against
// a fresh database (embedded PostgreSQL, or DATABASE_URL's server) twice: the first run adds every
// member, the second finds them all unchanged. Prints rows/s and the import process's peak
// resident memory (VmHWM of /proc/{pid}/status, polled while it runs). Targets: at least 5,000
// rows/s, peak under 300 MB.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshDatabase, stopTestDatabases, databaseKind } from '../test/support/database.js';
import { integerOption } from './command-line-options.js';
import { runThenExit } from './run-then-exit.js';

const ROWS = integerOption('rows', 200_000);
const BIN = fileURLToPath(new URL('../bin/guestpass.js', import.meta.url));

interface Run {
  readonly seconds: number;
  readonly peakMb: number;
  readonly summary: Record<string, unknown>;
}

/** Runs the CLI; peak memory from `/proc/{pid}/status` VmHWM, read just before it exits (polled). */
function guestpass(env: NodeJS.ProcessEnv, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peakKb = 0;
    const poll = setInterval(() => void readPeak(child.pid!).then((kb) => (peakKb = Math.max(peakKb, kb))), 100);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(poll);
      const seconds = (performance.now() - started) / 1000;
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 && code !== 1) return reject(new Error(`guestpass ${args.join(' ')} exited ${code}: ${stderr}`));
      resolve({ seconds, peakMb: peakKb / 1024, summary: JSON.parse(last) as Record<string, unknown> });
    });
  });
}

async function readPeak(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function writeCsv(file: string): Promise<void> {
  const out = createWriteStream(file);
  out.write('first_name,last_name,email,phone,job_title,department,external_id\n');
  for (let i = 0; i < ROWS; i++) {
    const line = `First${i},Last${i % 997},member${i}@example.com,+4915${String(i).padStart(9, '0')},Engineer,Dept ${i % 50},HR-${i}\n`;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-bench-import-'));
  try {
    const file = path.join(dir, 'members.csv');
    await writeCsv(file);
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), LOG_LEVEL: 'warn', DATABASE_URL: await freshDatabase('bench_import'), GUESTPASS_DATA_DIR: dir };
    console.log(`member import of ${ROWS.toLocaleString('en')} rows on ${databaseKind()} PostgreSQL, the CLI in its own process`);
    const org = await guestpass(env, ['org', 'create', '--name', 'Bench', '--json']);
    const orgId = String(org.summary.id);
    for (const label of ['first run (adds every member)', 'second run (all unchanged)']) {
      const run = await guestpass(env, ['member', 'import', '--org', orgId, file, '--json']);
      const rate = ROWS / run.seconds;
      console.log(
        `  ${label.padEnd(32)} ${run.seconds.toFixed(1)} s   ${rate.toFixed(0)} rows/s (target >= 5,000: ${rate >= 5000 ? 'met' : 'NOT met'})` +
          `   peak ${run.peakMb.toFixed(0)} MB (target < 300: ${run.peakMb < 300 ? 'met' : 'NOT met'})   ${JSON.stringify({ added: run.summary.added, unchanged: run.summary.unchanged, failed: run.summary.failed })}`,
      );
    }
    console.log(`  machine  ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await stopTestDatabases();
  }
}

runThenExit(main);
