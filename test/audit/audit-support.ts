// What the audit tests share: a notary over a test stack, waiting for it to catch up, and the
// operator export through the CLI verified by the CLI, as an auditor would run them.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { expect } from 'chai';
import { main, type Io } from '../../cli/guestpass.js';
import type { EventStore, Position } from '../../shared/event-store/event-store.js';
import { storedEvents } from '../../shared/event-store/validating-event-store.js';
import { readTreeState } from '../../shared/audit/postgres-audit-tree.js';
import { auditKeySet } from '../../shared/audit/audit-keys.js';
import { TEST_DATA_KEK_HEX } from '../support/data-kek.js';

/** The OAuth KEK of the audit tests: it seals the audit key. */
export const AUDIT_TEST_KEK = Buffer.alloc(32, 9);

export async function eventCount(store: EventStore): Promise<number> {
  let count = 0;
  let after: Position | undefined;
  for (;;) {
    const page = await storedEvents(store).readAll({ after, maxCount: 1000 });
    if (page.length === 0) return count;
    count += page.length;
    after = page.at(-1)!.position;
  }
}

/** Waits (bounded) until the tree holds every event now in the log. */
export async function treeCaughtUp(knex: Knex, store: EventStore, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const wanted = await eventCount(store);
    const { treeSize } = await readTreeState(knex);
    if (treeSize >= wanted) return treeSize;
    if (Date.now() > deadline) throw new Error(`the audit tree has ${treeSize} leaves; the log holds ${wanted} events`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface CliRun {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

export function auditCli(databaseUrl: string, dataDir: string) {
  return async (...argv: string[]): Promise<CliRun> => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (line) => out.push(line), err: (line) => err.push(line) };
    const code = await main(argv, io, {
      DATABASE_URL: databaseUrl,
      GUESTPASS_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      DATA_KEY_ENCRYPTION_KEY: TEST_DATA_KEK_HEX,
      OAUTH_KEY_ENCRYPTION_KEY: AUDIT_TEST_KEK.toString('hex'),
    });
    return { code, out, err };
  };
}

/** `audit export` into a file, then `audit verify` of it with the key set saved beside it. */
export async function exportAndVerify(knex: Knex, databaseUrl: string, options: { exportArgs?: string[]; verifyArgs?: string[] } = {}): Promise<CliRun & { file: string; dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-audit-'));
  const cli = auditCli(databaseUrl, dir);
  const exported = await cli('audit', 'export', ...(options.exportArgs ?? []));
  expect(exported.code, exported.err.join('\n')).to.equal(0);
  const file = path.join(dir, 'export.ndjson');
  await writeFile(file, exported.out.join('\n') + '\n');
  await writeFile(path.join(dir, 'keys.json'), JSON.stringify(await auditKeySet(knex)));
  const verified = await cli('audit', 'verify', file, '--keys', path.join(dir, 'keys.json'), '--json', ...(options.verifyArgs ?? []));
  return { ...verified, file, dir };
}
