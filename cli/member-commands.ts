// `npx guestpass member ...`: the organization's member directory (issue 16), from the operator's
// side: add, update, deactivate, reactivate and erase one member, and import an HR system's CSV.
// cli/guestpass.ts dispatches here and gives the pieces every command shares (its write wrapper
// runs a projection runner for the command's read-your-writes).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { CommandContext } from '../shared/event-store/command-handler.js';
import { MEMBER_ID_PATTERN } from '../shared/domain/member-events.js';
import type { MemberProfileInput } from '../shared/domain/member-input.js';
import { addMember } from '../command-service/members/add-member.js';
import { updateMember } from '../command-service/members/update-member.js';
import { deactivateMember, reactivateMember } from '../command-service/members/change-member-status.js';
import { eraseMember } from '../command-service/members/erase-member.js';
import { importMembers, type ImportCounts } from '../command-service/members/import-members.js';
import { ProgressBar } from '../projections/progress-bar.js';
import type { Runtime } from '../runtime/runtime.js';
import { withModestHeapGrowth } from './heap-growth.js';
import { integerArg, noPositionals, optional, parse, required, UsageError, type Options } from './cli-args.js';

export const MEMBER_USAGE = `  member add --org ORG --first-name F --last-name L [--email E] [--phone P] [--job-title T] [--department D] [--external-id X]
  member update ID [--first-name F] [--last-name L] [--email E] [--phone P] [--job-title T] [--department D] [--external-id X]
                   (an option given as '' clears that field)
  member deactivate|reactivate ID
  member erase ID [--include-name]   (destroys the contact's key, and the name's with --include-name)
  member import --org ORG FILE.csv   (columns first_name,last_name,email,phone,job_title,department,external_id;
                                      rows matched by email, else external_id; a re-run changes nothing)`;

export interface MemberCommandKit {
  readonly json: boolean;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Runs a write with the read models kept current (guestpass.ts `write`). */
  readonly write: <T>(runtime: Runtime, work: (ctx: CommandContext) => Promise<T>) => Promise<T>;
}

type Result = { json: Record<string, unknown>; text: string; exitCode?: number };

/** At most this many row errors in the `--json` report (all of them are counted). */
const MAX_JSON_ERRORS = 1000;

const PROFILE_OPTIONS: Options = {
  'first-name': { type: 'string' },
  'last-name': { type: 'string' },
  email: { type: 'string' },
  phone: { type: 'string' },
  'job-title': { type: 'string' },
  department: { type: 'string' },
  'external-id': { type: 'string' },
};

/** The profile fields given on the command line; an option not given is undefined (update keeps it). */
function profileOptions(values: Record<string, unknown>): MemberProfileInput {
  return {
    firstName: optional(values, 'first-name'),
    lastName: optional(values, 'last-name'),
    email: optional(values, 'email'),
    phone: optional(values, 'phone'),
    jobTitle: optional(values, 'job-title'),
    department: optional(values, 'department'),
    externalId: optional(values, 'external-id'),
  };
}

const MEMBER_ID = new RegExp(MEMBER_ID_PATTERN);

/** The one ID positional of `member <action> ID`. */
function memberIdArg(positionals: readonly string[], action: string): string {
  if (positionals.length === 0) throw new UsageError(`member ${action} ID`);
  noPositionals(positionals.slice(1));
  const id = positionals[0]!;
  if (!MEMBER_ID.test(id)) throw new UsageError(`ID must be a member id (emp_ and 32 hex digits), not "${id}"`);
  return id;
}

export async function memberCommand(runtime: Runtime, args: string[], kit: MemberCommandKit): Promise<Result> {
  const [action, ...rest] = args;
  switch (action) {
    case 'add': {
      const { values, positionals } = parse(rest, { org: { type: 'string' }, ...PROFILE_OPTIONS });
      noPositionals(positionals);
      const input = {
        ...profileOptions(values),
        orgId: integerArg(required(values, 'org'), '--org'),
        firstName: required(values, 'first-name'),
        lastName: required(values, 'last-name'),
      };
      const { memberId } = await kit.write(runtime, (ctx) => addMember(runtime.deps, input, ctx));
      return { json: { id: memberId }, text: `member ${memberId} added` };
    }
    case 'update': {
      const { values, positionals } = parse(rest, PROFILE_OPTIONS);
      const memberId = memberIdArg(positionals, 'update');
      const patch = profileOptions(values);
      if (Object.values(patch).every((v) => v === undefined)) throw new UsageError('member update ID needs at least one field to change (--first-name, --email, ...)');
      const { changed } = await kit.write(runtime, (ctx) => updateMember(runtime.deps, memberId, patch, ctx));
      return { json: { id: memberId, changed }, text: changed ? `member ${memberId} updated` : `member ${memberId}: no change` };
    }
    case 'deactivate':
    case 'reactivate': {
      const { positionals } = parse(rest, {});
      const memberId = memberIdArg(positionals, action);
      const change = action === 'deactivate' ? deactivateMember : reactivateMember;
      const { changed } = await kit.write(runtime, (ctx) => change(runtime.deps, { memberId }, ctx));
      return { json: { id: memberId, changed }, text: changed ? `member ${memberId}: ${action}d` : `member ${memberId}: no change` };
    }
    case 'erase': {
      const { values, positionals } = parse(rest, { 'include-name': { type: 'boolean' } });
      const memberId = memberIdArg(positionals, 'erase');
      const includeName = (values as Record<string, unknown>)['include-name'] === true;
      const erased = await kit.write(runtime, (ctx) => eraseMember(runtime.deps, memberId, { includeName }, ctx));
      const what = erased.includeName ? 'contact and name' : 'contact';
      return {
        json: { id: memberId, changed: erased.changed, include_name: erased.includeName },
        text: erased.changed ? `member ${memberId}: ${what} erased` : `member ${memberId}: ${what} already erased`,
      };
    }
    case 'import':
      return importCommand(runtime, rest, kit);
    default:
      throw new UsageError(`member add|update|deactivate|reactivate|erase|import\n${MEMBER_USAGE}`);
  }
}

async function importCommand(runtime: Runtime, args: string[], kit: MemberCommandKit): Promise<Result> {
  const { values, positionals } = parse(args, { org: { type: 'string' } });
  const orgId = integerArg(required(values, 'org'), '--org');
  if (positionals.length === 0) throw new UsageError('member import --org ORG FILE.csv');
  noPositionals(positionals.slice(1));
  const file = positionals[0]!;
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error('not a file');
    size = info.size;
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }

  const tty = !kit.json && Boolean(process.stderr.isTTY);
  const bar = tty ? new ProgressBar({ label: 'import' }) : null;
  // Opened when the import starts reading: lines readline emits before anyone iterates are lost.
  let bytesRead = 0;
  async function* lines(): AsyncGenerator<string> {
    const input = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
    const reader = createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const line of reader) {
        bytesRead = input.bytesRead;
        yield line;
      }
    } finally {
      reader.close();
      input.destroy();
    }
  }
  const progress = (counts: ImportCounts) => ({
    fraction: size === 0 ? 1 : Math.min(1, bytesRead / size),
    detail: `${NUMBER.format(counts.rows)} rows: ${NUMBER.format(counts.added)} added, ${NUMBER.format(counts.updated)} updated, ${NUMBER.format(counts.unchanged)} unchanged, ${NUMBER.format(counts.failed)} failed`,
  });
  const errors: Array<{ row: number; message: string }> = [];
  const startedAt = Date.now();
  const report = await withModestHeapGrowth(() =>
    kit.write(runtime, (ctx) =>
      importMembers(runtime.deps, { orgId, lines: lines() }, ctx, {
        onProgress: bar ? (counts) => bar.update(progress(counts)) : undefined,
        onRowError: (row, message) => {
          if (kit.json) {
            if (errors.length < MAX_JSON_ERRORS) errors.push({ row, message });
            return;
          }
          // On a terminal, over the bar's line (it is drawn again with the next chunk).
          kit.err(`${tty ? '\r\x1b[K' : ''}row ${row}: ${message}`);
        },
      }),
    ),
  );
  bar?.finish(progress(report));
  const seconds = (Date.now() - startedAt) / 1000;
  const summary =
    `imported ${file} into organization ${orgId}: ${report.rows} rows, ${report.added} added, ${report.updated} updated, ` +
    `${report.unchanged} unchanged, ${report.failed} failed (${seconds.toFixed(1)} s)` +
    (report.caughtUp ? '' : `\nwarning: the member directory is still catching up with the import`);
  return {
    json: {
      rows: report.rows,
      added: report.added,
      updated: report.updated,
      unchanged: report.unchanged,
      failed: report.failed,
      errors,
      ...(report.failed > errors.length ? { errors_truncated: true } : {}),
      caught_up: report.caughtUp,
    },
    text: summary,
    // A file with bad rows is a refused request in part: scripts see it, the good rows are in.
    exitCode: report.failed > 0 ? 1 : 0,
  };
}

const NUMBER = new Intl.NumberFormat('en');
