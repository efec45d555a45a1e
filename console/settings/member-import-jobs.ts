// Member imports started from the console: each runs in this process in the background (the
// CLI's use case, importMembers), while the browser watches its progress page. One import per
// organization at a time; a finished one is kept an hour for its report, with its first
// MAX_REPORTED rejected rows. The progress lives in this process only: the page that started
// it must be served by the same instance (a deployment with several behind one address routes
// the console stickily, or imports through the CLI).
import { randomBytes } from 'node:crypto';
import type { CommandDeps } from '../../command-service/command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { importMembers, type ImportCounts } from '../../command-service/members/import-members.js';
import { ConflictError, DomainError } from '../../shared/errors.js';

export const MAX_REPORTED = 1000;
const KEEP_MS = 60 * 60 * 1000;

export interface ImportJob {
  readonly id: string;
  readonly orgId: number;
  readonly fileName: string;
  readonly startedAt: Date;
  state: 'running' | 'done' | 'failed';
  counts: ImportCounts;
  readonly rejected: Array<{ row: number; message: string }>;
  /** Why the whole file was refused (a bad header), when it was. */
  failure: string | null;
  finishedAt: Date | null;
}

export class MemberImportJobs {
  private readonly jobs = new Map<string, ImportJob>();

  constructor(private readonly deps: CommandDeps) {}

  start(input: { orgId: number; fileName: string; lines: AsyncIterable<string> }, ctx: CommandContext): ImportJob {
    this.forgetOld();
    if ([...this.jobs.values()].some((j) => j.orgId === input.orgId && j.state === 'running')) {
      throw new ConflictError('an import is already running for your organization; wait for it to finish');
    }
    const job: ImportJob = {
      id: randomBytes(16).toString('base64url'),
      orgId: input.orgId,
      fileName: input.fileName,
      startedAt: new Date(),
      state: 'running',
      counts: { rows: 0, added: 0, updated: 0, unchanged: 0, failed: 0 },
      rejected: [],
      failure: null,
      finishedAt: null,
    };
    this.jobs.set(job.id, job);
    importMembers(this.deps, { orgId: input.orgId, lines: input.lines }, ctx, {
      onProgress: (counts) => void (job.counts = counts),
      onRowError: (row, message) => void (job.rejected.length < MAX_REPORTED && job.rejected.push({ row, message })),
    }).then(
      (report) => {
        job.counts = report;
        job.state = 'done';
        job.finishedAt = new Date();
      },
      (error: unknown) => {
        job.state = 'failed';
        // A refusal of the whole file says why; anything else is not the admin's to read.
        job.failure = error instanceof DomainError ? error.message : 'the import stopped on an internal error; the rows before it were imported';
        job.finishedAt = new Date();
      },
    );
    return job;
  }

  /** The job, when it is this organization's (another's reads as none). */
  get(id: string, orgId: number): ImportJob | null {
    const job = this.jobs.get(id);
    return job !== undefined && job.orgId === orgId ? job : null;
  }

  private forgetOld(): void {
    const before = Date.now() - KEEP_MS;
    for (const [id, job] of this.jobs) if (job.finishedAt !== null && job.finishedAt.getTime() < before) this.jobs.delete(id);
  }
}
