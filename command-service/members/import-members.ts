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
// * Fast and bounded: the file is read line by line and rows are handled in chunks, each in a
//   few round trips whatever its size: one directory query, one read of the matched streams, one
//   of their keys, one write of the new members' keys, and the chunk's appends together
//   (CommandHandler.handleMany). There is no read-your-writes wait per row: the directory must
//   have caught up with the log before the import starts (else it could not match what an
//   earlier run added), and is waited for once at the end.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext, StreamCommand, StreamState } from '../../shared/event-store/command-handler.js';
import { comparePositions, START, type Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { memberDecider, type KnownMember, type MemberCommand, type MemberState } from '../../shared/domain/member-decider.js';
import { MEMBER_FIELDS, parseMemberProfile, type MemberField, type MemberProfile } from '../../shared/domain/member-input.js';
import { CsvError, CsvLineReader } from '../../shared/domain/csv.js';
import { ConfigError } from '../../shared/config.js';
import { DomainError, ValidationError } from '../../shared/errors.js';
import type { ContactHasher } from '../../shared/crypto/contact-search.js';
import { addMemberCommands, assertOrganization, keysOf, profileChange } from './member-profile.js';
import { findMembers } from './member-directory.js';
import { hexDigest, RowIndex, textDigest, type Digest } from './row-index.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

/**
 * Rows per chunk, each chunk a few statements: the directory query, the matched streams' read and
 * their keys' (when it matches members), the new members' keys, and one append. 512 measured as
 * fast as 1,024 and keeps half as much in hand (two chunks are: one written, the next prepared).
 */
const CHUNK_ROWS = 512;
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

interface RowError {
  readonly row: number;
  readonly message: string;
}

/** A chunk's commands ready to append: the new members' first (`joins` of them), then the changes. */
interface PreparedChunk {
  readonly commands: ReadonlyArray<StreamCommand<MemberCommand, MemberState>>;
  /** The row of each command. */
  readonly rows: readonly Row[];
  readonly joins: number;
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
  /** The first row of each email (by its keyed hash) and of each external id in the file. */
  private readonly emailRows = new RowIndex();
  private readonly externalIdRows = new RowIndex();
  /** The row that matched each existing member. */
  private readonly memberRows = new RowIndex();
  /** Errors of the rows read since the last chunk began: they belong to the next one. */
  private errors: RowError[] = [];
  /** The chunk being written: the next one is read and matched meanwhile, and written after it. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: CommandDeps,
    private readonly orgId: number,
    private readonly hasher: ContactHasher,
    private readonly ctx: CommandContext,
    private readonly options: ImportMembersOptions,
  ) {}

  fail(row: number, message: string, errors = this.errors): void {
    this.failed++;
    errors.push({ row, message });
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
    const keys: Array<[RowIndex, Digest, MemberField]> = [];
    if (emailHash !== null) keys.push([this.emailRows, hexDigest(emailHash), 'email']);
    if (profile.externalId !== null) keys.push([this.externalIdRows, textDigest(profile.externalId), 'external_id']);
    for (const [index, digest, field] of keys) {
      const first = index.get(digest);
      if (first !== undefined) {
        this.fail(line, `${field}: also on row ${first} (one row per member)`);
        return null;
      }
    }
    for (const [index, digest] of keys) index.add(digest, line);
    return { line, profile, emailHash };
  }

  /**
   * Matches one chunk of checked rows, then prepares it while the next is read and matched, and
   * writes it after the one before. Resolves once the one before is written: at most two chunks
   * are in hand, and the database works on one while this process works on the other.
   */
  async run(rows: readonly Row[]): Promise<void> {
    const errors = this.errors;
    this.errors = [];
    const prepared = rows.length > 0 ? this.prepare(await this.match(rows, errors), errors) : null;
    const before = this.writing;
    this.writing = Promise.all([before, prepared]).then(async ([, chunk]) => {
      if (chunk) await this.write(chunk, errors);
      this.report(errors);
    });
    this.writing.catch(() => undefined); // whoever awaits it next sees the failure; never unhandled
    await before;
  }

  /** Each row with the member it matches (null: a new member), the rows matching a member an earlier row matched refused. */
  private async match(rows: readonly Row[], errors: RowError[]): Promise<Array<{ row: Row; memberId: string | null }>> {
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
        const digest = hexDigest(memberId.slice('emp_'.length));
        const earlier = this.memberRows.get(digest);
        if (earlier !== undefined) {
          this.fail(row.line, `matches the same member as row ${earlier} (one row per member)`, errors);
          continue;
        }
        this.memberRows.add(digest, row.line);
      }
      work.push({ row, memberId });
    }
    return work;
  }

  /**
   * The chunk's commands: the matched members' streams in one read and their keys in another, each
   * row decided on what was read (an unchanged one costs nothing more), and the new members
   * sealed under keys created with one write.
   */
  private async prepare(work: ReadonlyArray<{ row: Row; memberId: string | null }>, errors: RowError[]): Promise<PreparedChunk> {
    const matched = work.flatMap((w) => (w.memberId === null ? [] : [w.memberId]));
    const loaded = await this.deps.handler.loadMany(matched.map(streams.member), memberDecider);
    const members = new Map<string, StreamState<KnownMember>>();
    for (const { state, revision } of loaded) if (state.status !== 'absent') members.set(state.memberId, { state, revision });
    const keys = await keysOf(this.deps, [...members.values()].map((m) => m.state));

    const adds: Row[] = [];
    const changes: Array<{ row: Row; command: StreamCommand<MemberCommand, MemberState> }> = [];
    await Promise.all(
      work.map(async ({ row, memberId }) => {
        const member = memberId === null ? undefined : members.get(memberId);
        if (member === undefined) return void adds.push(row);
        try {
          const command = await profileChange(this.deps, member.state, keys, row.profile, this.orgId);
          // Decided here first, on the state read above: an unchanged row is done.
          if (memberDecider.decide(command, member.state).length === 0) return void this.unchanged++;
          changes.push({ row, command: { streamName: streams.member(member.state.memberId), command, read: member } });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          this.fail(row.line, error.message, errors);
        }
      }),
    );
    const joins = await addMemberCommands(this.deps, this.orgId, adds.map((row) => ({ profile: row.profile, userId: null })));
    return {
      commands: [...joins.map((command) => ({ streamName: streams.member(command.data.memberId), command })), ...changes.map((c) => c.command)],
      rows: [...adds, ...changes.map((c) => c.row)],
      joins: joins.length,
    };
  }

  /** Every append of the chunk together (handleMany). */
  private async write({ commands, rows, joins }: PreparedChunk, errors: RowError[]): Promise<void> {
    const outcomes = await this.deps.handler.handleMany(memberDecider, commands, this.ctx);
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.status === 'rejected') {
        if (!(outcome.reason instanceof DomainError)) throw outcome.reason;
        this.fail(rows[i]!.line, outcome.reason.message, errors);
      } else if (outcome.value.events.length === 0) {
        this.unchanged++; // another writer made the same change meanwhile
      } else {
        if (i < joins) this.added++;
        else this.updated++;
        this.wrote(outcome.value.position);
      }
    }
  }

  private wrote(position: Position): void {
    if (comparePositions(position, this.position) > 0) this.position = position;
  }

  private report(errors: RowError[]): void {
    errors.sort((a, b) => a.row - b.row);
    for (const { row, message } of errors) this.options.onRowError?.(row, message);
    this.options.onProgress?.(this.counts());
  }

  private counts(): ImportCounts {
    return { rows: this.rows, added: this.added, updated: this.updated, unchanged: this.unchanged, failed: this.failed };
  }

  async finish(catchUpMs: number): Promise<ImportReport> {
    await this.writing;
    const caughtUp = comparePositions(this.position, START) <= 0 || (await this.deps.watermark.waitFor(this.position, catchUpMs, [READ_MODELS.memberDirectory]));
    return { ...this.counts(), position: this.position, caughtUp };
  }
}
