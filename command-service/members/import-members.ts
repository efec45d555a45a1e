// Use case: import an organization's members from an HR system's CSV file (CLI `member import`).
//
// * The header names the columns, any of first_name, last_name, email, phone, job_title,
//   department, external_id, in any order; first_name and last_name are required; an unknown or
//   repeated column refuses the whole file before anything is written. Every row is a whole
//   profile: an empty cell is an absent value (it clears what the member had).
// * A row is matched to a member of the organization by its email (the keyed hash in
//   member_directory's email_hash), else by its external_id; a matched row records a
//   MemberProfileChanged only when something differs (the member decider says so, on the state the
//   import read), an unmatched row adds a member. Running the same file again records nothing.
// * A bad row is reported (`row 12: email: not an address`) and the rest go on. A row whose email
//   or external_id an earlier row of the file already has, or that matches the member an earlier
//   row matched, is refused too: one member per person, so a second run cannot flip between them.
// * Fast and bounded: the file is read line by line, rows are handled in chunks (one directory
//   query, one read of the matched streams, one read of their keys per chunk), and each chunk's
//   writes run with a bounded number in flight. There is no read-your-writes wait per row: the
//   directory must have caught up with the log before the import starts (else it could not match
//   what an earlier run added), and is waited for once at the end.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { comparePositions, START, type Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { memberDecider, type KnownMember } from '../../shared/domain/member-decider.js';
import { MEMBER_FIELDS, parseMemberProfile, type MemberField, type MemberProfile } from '../../shared/domain/member-input.js';
import { CsvError, CsvLineReader } from '../../shared/domain/csv.js';
import { ConfigError } from '../../shared/config.js';
import { DomainError, ValidationError } from '../../shared/errors.js';
import type { ContactHasher } from '../../shared/crypto/contact-search.js';
import { assertOrganization, changeProfile, joinMember, keysOf, profileChange } from './member-profile.js';
import { findMembers } from './member-directory.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

/** Rows per chunk: one directory query, one stream read and one key read each. */
const CHUNK_ROWS = 1024;
/** Row writes in flight at once (each adds its append and key inserts to the turn's shared statements). */
const DEFAULT_CONCURRENCY = 128;
/** How long the directory may take to catch up with the log, before the import and after it. */
const DEFAULT_CATCH_UP_MS = 120_000;

export interface ImportCounts {
  /** Data rows read (the header not counted). */
  readonly rows: number;
  readonly added: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly failed: number;
}

export interface ImportMembersOptions {
  /** Told after every chunk. */
  readonly onProgress?: (counts: ImportCounts) => void;
  /** Told of every bad row, in file order within a chunk; `row` is the line the row starts on. */
  readonly onRowError?: (row: number, message: string) => void;
  readonly concurrency?: number;
  readonly catchUpMs?: number;
}

export interface ImportReport extends ImportCounts {
  /** The last position written (START when nothing was). */
  readonly position: Position;
  /** member_directory holds everything written (false: it was still catching up when the import ended). */
  readonly caughtUp: boolean;
}

interface Row {
  readonly line: number;
  readonly profile: MemberProfile;
  readonly emailHash: string | null;
}

/** The columns of the header, or a ValidationError naming what is wrong with it. */
export function importColumns(header: readonly string[]): MemberField[] {
  const names = header.map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !(MEMBER_FIELDS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    const quoted = unknown.map((name) => `"${name}"`).join(', ');
    throw new ValidationError(`unknown column${unknown.length > 1 ? 's' : ''} ${quoted}; the columns are ${MEMBER_FIELDS.join(', ')}`);
  }
  const repeated = names.filter((name, i) => names.indexOf(name) !== i);
  if (repeated.length > 0) throw new ValidationError(`column "${repeated[0]}" appears twice in the header`);
  const missing = (['first_name', 'last_name'] as const).filter((name) => !names.includes(name));
  if (missing.length > 0) throw new ValidationError(`the header has no ${missing.join(' and ')} column`);
  return names as MemberField[];
}

export async function importMembers(
  deps: CommandDeps,
  input: { readonly orgId: number; readonly lines: AsyncIterable<string> },
  ctx: CommandContext,
  options: ImportMembersOptions = {},
): Promise<ImportReport> {
  const { orgId } = input;
  const hasher = deps.contactHasher;
  if (!hasher) throw new ConfigError('member import needs the contact search key (no contact hasher is configured)');
  await assertOrganization(deps, orgId);
  const catchUpMs = options.catchUpMs ?? DEFAULT_CATCH_UP_MS;
  // Rows are matched against the directory: it must hold every member an earlier run (or anyone) added.
  const head = await deps.store.headPosition();
  if (!(await deps.watermark.waitFor(head, catchUpMs, [READ_MODELS.memberDirectory]))) {
    throw new ConfigError(`the ${READ_MODELS.memberDirectory} read model did not catch up with the log within ${catchUpMs} ms; import later (rows could not be matched)`);
  }

  const importer = new MemberImport(deps, orgId, hasher, ctx, options);
  const reader = new CsvLineReader();
  let columns: MemberField[] | null = null;
  let chunk: Row[] = [];
  for await (const line of input.lines) {
    let record;
    try {
      record = reader.push(line);
    } catch (error) {
      if (!(error instanceof CsvError)) throw error;
      if (columns === null) throw new ValidationError(`the header is not valid CSV: ${error.message}`);
      importer.badRecord(error);
      continue;
    }
    if (record === null) continue;
    if (columns === null) {
      columns = importColumns(record.fields);
      continue;
    }
    const row = importer.parse(record.line, columns, record.fields);
    if (row) chunk.push(row);
    if (chunk.length >= CHUNK_ROWS) {
      await importer.run(chunk);
      chunk = [];
    }
  }
  try {
    reader.end();
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    importer.badRecord(error);
  }
  if (columns === null) throw new ValidationError('the file is empty: the first row must name the columns');
  await importer.run(chunk);
  return importer.finish(catchUpMs);
}

class MemberImport {
  private rows = 0;
  private added = 0;
  private updated = 0;
  private unchanged = 0;
  private failed = 0;
  private position: Position = START;
  /** The first row of each email hash and external id in the file (hash cut to 64 bits: memory). */
  private readonly firstRowOf = new Map<string, number>();
  /** The row that matched each existing member. */
  private readonly memberRow = new Map<string, number>();
  /** Errors of the chunk under way, told in file order once it is done. */
  private errors: Array<{ row: number; message: string }> = [];

  constructor(
    private readonly deps: CommandDeps,
    private readonly orgId: number,
    private readonly hasher: ContactHasher,
    private readonly ctx: CommandContext,
    private readonly options: ImportMembersOptions,
  ) {}

  fail(row: number, message: string): void {
    this.failed++;
    this.errors.push({ row, message });
  }

  /** A record the CSV reader could not read. */
  badRecord(error: CsvError): void {
    this.rows++;
    this.fail(error.line, error.message.replace(/^row \d+: /, ''));
  }

  /** Checks one data row; null (and reported) when it is bad or repeats an earlier row. */
  parse(line: number, columns: readonly MemberField[], fields: readonly string[]): Row | null {
    this.rows++;
    if (fields.length !== columns.length) {
      this.fail(line, `has ${fields.length} field${fields.length === 1 ? '' : 's'}, the header has ${columns.length}`);
      return null;
    }
    const cell = (name: MemberField) => {
      const i = columns.indexOf(name);
      return i === -1 ? null : fields[i]!;
    };
    let profile: MemberProfile;
    try {
      profile = parseMemberProfile({
        firstName: cell('first_name'),
        lastName: cell('last_name'),
        email: cell('email'),
        phone: cell('phone'),
        jobTitle: cell('job_title'),
        department: cell('department'),
        externalId: cell('external_id'),
      });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      this.fail(line, error.message);
      return null;
    }
    const emailHash = profile.email === null ? null : this.hasher.hash('email', profile.email);
    const keys: Array<[string, string]> = [];
    if (emailHash !== null) keys.push([`e${emailHash.slice(0, 16)}`, 'email']);
    if (profile.externalId !== null) keys.push([`x${profile.externalId}`, 'external_id']);
    for (const [key, field] of keys) {
      const first = this.firstRowOf.get(key);
      if (first !== undefined) {
        this.fail(line, `${field}: also on row ${first} (one row per member)`);
        return null;
      }
    }
    for (const [key] of keys) this.firstRowOf.set(key, line);
    return { line, profile, emailHash };
  }

  /** Matches, reads and writes one chunk of checked rows. */
  async run(rows: readonly Row[]): Promise<void> {
    if (rows.length > 0) {
      const hashes = rows.flatMap((r) => (r.emailHash === null ? [] : [r.emailHash]));
      const externalIds = rows.flatMap((r) => (r.profile.externalId === null ? [] : [r.profile.externalId]));
      const found = await findMembers(this.deps.db, this.orgId, hashes, externalIds);
      const work: Array<{ row: Row; memberId: string | null }> = [];
      for (const row of rows) {
        const memberId =
          (row.emailHash !== null ? found.byEmailHash.get(row.emailHash) : undefined) ??
          (row.profile.externalId !== null ? found.byExternalId.get(row.profile.externalId) : undefined) ??
          null;
        if (memberId !== null) {
          const earlier = this.memberRow.get(memberId);
          if (earlier !== undefined) {
            this.fail(row.line, `matches the same member as row ${earlier} (one row per member)`);
            continue;
          }
          this.memberRow.set(memberId, row.line);
        }
        work.push({ row, memberId });
      }
      // The matched members' streams in one read (the handler batches a turn's loads), their keys in another.
      const matched = [...new Set(work.flatMap((w) => (w.memberId === null ? [] : [w.memberId])))];
      const loaded = await Promise.all(matched.map((id) => this.deps.handler.load(streams.member(id), memberDecider)));
      const members = new Map<string, KnownMember>();
      for (const { state } of loaded) if (state.status !== 'absent') members.set(state.memberId, state);
      const keys = await keysOf(this.deps, [...members.values()]);
      await inParallel(work, this.options.concurrency ?? DEFAULT_CONCURRENCY, async ({ row, memberId }) => {
        const member = memberId === null ? undefined : members.get(memberId);
        try {
          if (member === undefined) {
            const joined = await joinMember(this.deps, this.orgId, row.profile, null, this.ctx);
            this.added++;
            this.wrote(joined.position);
            return;
          }
          const command = await profileChange(this.deps, member, keys, row.profile, this.orgId);
          // Decided first on the state read above: an unchanged row costs no append (and no re-read).
          if (memberDecider.decide(command, member).length === 0) {
            this.unchanged++;
            return;
          }
          const result = await changeProfile(this.deps, member.memberId, command, this.ctx);
          if (result.changed) {
            this.updated++;
            this.wrote(result.position);
          } else {
            this.unchanged++;
          }
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          this.fail(row.line, error.message);
        }
      });
    }
    this.report();
  }

  private wrote(position: Position): void {
    if (comparePositions(position, this.position) > 0) this.position = position;
  }

  private report(): void {
    const errors = this.errors.sort((a, b) => a.row - b.row);
    this.errors = [];
    for (const { row, message } of errors) this.options.onRowError?.(row, message);
    this.options.onProgress?.(this.counts());
  }

  private counts(): ImportCounts {
    return { rows: this.rows, added: this.added, updated: this.updated, unchanged: this.unchanged, failed: this.failed };
  }

  async finish(catchUpMs: number): Promise<ImportReport> {
    const caughtUp = comparePositions(this.position, START) <= 0 || (await this.deps.watermark.waitFor(this.position, catchUpMs, [READ_MODELS.memberDirectory]));
    return { ...this.counts(), position: this.position, caughtUp };
  }
}

/** Runs `work` over `items` with at most `limit` running at once; the first unexpected error rejects. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
