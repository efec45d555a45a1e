// `guestpass audit verify FILE --keys JWKS_FILE_OR_URL [--trusted-head FILE] [--organization]`:
// reads an export line by line as bytes (file-lines.ts: no database, flat memory), feeds the verifier
// (shared/audit/export-verifier.ts or org-export-verifier.ts), and shows its progress on a terminal.
import { readFile, stat } from 'node:fs/promises';
import type { JWK } from 'jose';
import { ValidationError } from '../shared/errors.js';
import { ExportVerifier, type VerificationResult } from '../shared/audit/export-verifier.js';
import { OrgExportVerifier } from '../shared/audit/org-export-verifier.js';
import { treeHeadSignatureProblem, type SignedTreeHead } from '../shared/audit/tree-head.js';
import { ProgressBar } from '../projections/progress-bar.js';
import { forEachChunk, linesOf } from './file-lines.js';

/** An unreadable key set, trusted head or file: reported in one line like every refused request. */
export class AuditInputError extends ValidationError {}

/** A JWKS from a file or an http(s) URL. */
export async function loadKeySet(source: string): Promise<JWK[]> {
  let text: string;
  try {
    if (/^https?:\/\//i.test(source)) {
      const response = await fetch(source, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(source, 'utf8');
    }
  } catch (error) {
    throw new AuditInputError(`cannot read the audit key set ${source}: ${(error as Error).message}`);
  }
  let parsed: { keys?: unknown };
  try {
    parsed = JSON.parse(text) as { keys?: unknown };
  } catch {
    throw new AuditInputError(`${source} is not JSON`);
  }
  if (!Array.isArray(parsed.keys)) throw new AuditInputError(`${source} is not a JWK set`);
  return parsed.keys as JWK[];
}

/** A head saved earlier: a head line of an export, a tenant page's `head`, or the API's head object. */
export async function loadTrustedHead(file: string): Promise<SignedTreeHead> {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new AuditInputError(`cannot read the trusted head ${file}: ${(error as Error).message}`);
  }
  const head = (value.head && typeof value.head === 'object' ? value.head : value) as Partial<SignedTreeHead>;
  if (typeof head.head !== 'number' || typeof head.tree_size !== 'number' || typeof head.root_hash !== 'string' || typeof head.timestamp !== 'number' || typeof head.signature !== 'string') {
    throw new AuditInputError(`${file} is not a signed tree head ({head, tree_size, root_hash, timestamp, signature})`);
  }
  return head as SignedTreeHead;
}

export async function verifyExportFile(
  file: string,
  options: {
    readonly keys: readonly JWK[];
    readonly trustedHead: SignedTreeHead | null;
    readonly organization: boolean;
    readonly progress: boolean;
  },
): Promise<VerificationResult> {
  const size = (await stat(file).catch(() => null))?.size ?? null;
  if (size === null) throw new AuditInputError(`cannot read ${file}`);
  if (options.trustedHead) {
    // A trusted head must itself be signed by a key of the set.
    const problem = await treeHeadSignatureProblem(options.trustedHead, options.keys);
    if (problem) throw new AuditInputError(`the trusted head ${options.trustedHead.head}: ${problem}`);
  }
  const bar = options.progress ? new ProgressBar({ label: 'verify' }) : null;
  const operator = options.organization ? null : new ExportVerifier(options.keys, options.trustedHead);
  const tenant = options.organization ? new OrgExportVerifier(options.keys, options.trustedHead) : null;
  let count = 0;
  let bytesRead = 0;
  const onLine = (bytes: Buffer): void | Promise<void> => {
    if (bytes.length === 0 || (isSpace(bytes[0]!) && bytes.toString('utf8').trim() === '')) return;
    count++;
    if (bar && count % 2000 === 0) bar.update({ fraction: size > 0 ? bytesRead / size : null, of: 'of the file', detail: `${count.toLocaleString('en')} lines` });
    // An operator's entry is hashed as the line carries it (the verifier parses only what fails).
    if (operator) return operator.lineBytes(bytes);
    let page: unknown;
    try {
      page = JSON.parse(bytes.toString('utf8'));
    } catch {
      page = { kind: 'not json' };
    }
    return tenant!.page(page as Parameters<OrgExportVerifier['page']>[0]);
  };
  await forEachChunk(file, async (chunk, total) => {
    bytesRead = total;
    for (const line of linesOf(chunk)) {
      const pending = onLine(line); // a promise only for a head (its signature) or a tenant's page
      if (pending) await pending;
    }
  });
  bar?.finish({ fraction: 1, of: 'of the file', detail: `${count.toLocaleString('en')} lines` });
  return operator ? operator.finish() : tenant!.finish();
}

const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0d;
