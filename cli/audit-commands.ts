// `npx guestpass audit ...` (issue 26): the operator's side of the audit log.
//
//   audit export [--from-head N] [--to-head M]      NDJSON of the events with the notary's leaves and
//                                                  the signed heads (docs/audit.md), to stdout
//   audit verify FILE --keys JWKS_FILE_OR_URL [--trusted-head FILE] [--organization]
//                                                  offline, no database: `verified: N events, heads A..B`
//                                                  or the first failing position and why (exit 1)
//   audit rotate-key                               a new audit signing key signs heads from now on
//
// cli/guestpass.ts dispatches here before it opens a runtime: verify needs none.
import { once } from 'node:events';
import type { Config } from '../shared/config.js';
import { ConfigError } from '../shared/config.js';
import { KeyEncryptionKeyError } from '../shared/oauth/key-encryption-key.js';
import { rotateAuditKey } from '../shared/audit/audit-keys.js';
import { describeResult } from '../shared/audit/export-verifier.js';
import { auditExportLines } from './audit-export.js';
import { exportLineText } from '../shared/audit/export-format.js';
import { loadKeySet, loadTrustedHead, verifyExportFile } from './audit-verify.js';
import { integerArg, noPositionals, optional, parse, required, UsageError } from './cli-args.js';
import { keyEncryptionKey, type Runtime } from '../runtime/runtime.js';

export const AUDIT_USAGE = `  audit export [--from-head N] [--to-head M]   (NDJSON: events, the notary's leaves, signed heads)
  audit verify FILE --keys JWKS_FILE_OR_URL [--trusted-head FILE] [--organization]   (offline)
  audit rotate-key   (a new audit signing key signs tree heads from now on)`;

export interface AuditCommandKit {
  readonly config: Config;
  readonly json: boolean;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly closed?: () => boolean;
  readonly openRuntime: () => Promise<Runtime>;
}

/** Exit code: 0 verified / done, 1 failed verification or refused, 2 usage. Throws what guestpass.ts reports. */
export async function auditCommand(args: string[], kit: AuditCommandKit): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'verify') return verify(rest, kit);
  if (action === 'export' || action === 'rotate-key') {
    const options = action === 'export' ? exportOptions(rest) : (noPositionals(parse(rest, {}).positionals), {});
    const runtime = await kit.openRuntime();
    try {
      if (action === 'export') return await exportLog(runtime, options, kit);
      return await rotate(runtime, kit);
    } finally {
      await runtime.close();
    }
  }
  throw new UsageError(`audit export|verify|rotate-key\n${AUDIT_USAGE}`);
}

function exportOptions(rest: string[]): { fromHead?: number; toHead?: number } {
  const { values, positionals } = parse(rest, { 'from-head': { type: 'string' }, 'to-head': { type: 'string' } });
  noPositionals(positionals);
  const from = optional(values, 'from-head');
  const to = optional(values, 'to-head');
  return { ...(from !== undefined ? { fromHead: integerArg(from, '--from-head') } : {}), ...(to !== undefined ? { toHead: integerArg(to, '--to-head') } : {}) };
}

async function exportLog(runtime: Runtime, options: { fromHead?: number; toHead?: number }, kit: AuditCommandKit): Promise<number> {
  let written = 0;
  for await (const line of auditExportLines({ knex: runtime.knex, store: runtime.store }, options)) {
    kit.out(exportLineText(line));
    if (kit.closed?.()) break;
    // Flat memory: let a slow reader of a pipe catch up rather than buffer the log.
    if (++written % 1000 === 0 && process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
  }
  return 0;
}

async function verify(rest: string[], kit: AuditCommandKit): Promise<number> {
  const { values, positionals } = parse(rest, { keys: { type: 'string' }, 'trusted-head': { type: 'string' }, organization: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('audit verify FILE --keys JWKS_FILE_OR_URL [--trusted-head FILE] [--organization]');
  const keys = await loadKeySet(required(values, 'keys'));
  const trustedFile = optional(values, 'trusted-head');
  const trustedHead = trustedFile ? await loadTrustedHead(trustedFile) : null;
  const result = await verifyExportFile(positionals[0]!, {
    keys,
    trustedHead,
    organization: (values as Record<string, unknown>).organization === true,
    progress: !kit.json && Boolean(process.stderr.isTTY),
  });
  const text = describeResult(result);
  if (kit.json) {
    kit.out(
      JSON.stringify({
        verified: result.ok,
        events: result.events,
        first_head: result.firstHead,
        last_head: result.lastHead,
        ...(result.failure
          ? { failure: { kind: result.failure.kind, position: result.failure.position, event_id: result.failure.eventId, leaf_index: result.failure.leafIndex, detail: result.failure.detail } }
          : {}),
      }),
    );
  } else if (result.ok) kit.out(text);
  else kit.err(text);
  return result.ok ? 0 : 1;
}

async function rotate(runtime: Runtime, kit: AuditCommandKit): Promise<number> {
  let rotated: { kid: string; previousKid: string };
  try {
    rotated = await rotateAuditKey(runtime.knex, await keyEncryptionKey(kit.config));
  } catch (error) {
    if (!(error instanceof KeyEncryptionKeyError)) throw error;
    throw new ConfigError(`the key-encryption key does not open the current audit key (${error.message}); use the service's OAUTH_KEY_ENCRYPTION_KEY or GUESTPASS_DATA_DIR`);
  }
  kit.out(
    kit.json
      ? JSON.stringify({ kid: rotated.kid, previous_kid: rotated.previousKid })
      : `audit key ${rotated.kid} signs tree heads from now on; ${rotated.previousKid} stays in /.well-known/audit-keys.json for the heads it signed`,
  );
  return 0;
}
