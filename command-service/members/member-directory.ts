// The member_directory read model, as the member use cases use it: what read-your-writes waits
// on, and the lookups the import matches rows by (columns member_id, org_id, email_hash,
// external_id and status; projections/member-directory-projection.ts keeps it).
import type { Knex } from 'knex';
import type { CommandDeps } from '../command-deps.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

const MEMBER_DIRECTORY = READ_MODELS.memberDirectory;

/** Read-your-writes for member writes: true once member_directory holds `position`. */
export function waitForMemberDirectory(deps: CommandDeps, position: Position): Promise<boolean> {
  return deps.watermark.waitFor(position, deps.projectionWaitMs, [READ_MODELS.memberDirectory]);
}

export interface DirectoryMatches {
  /** member id by email hash (the lowest id when several members share an address). */
  readonly byEmailHash: ReadonlyMap<string, string>;
  /** member id by external id (likewise). */
  readonly byExternalId: ReadonlyMap<string, string>;
}

/** The organization's members whose email hash or external id is among those given: one statement. */
export async function findMembers(db: Knex, orgId: number, emailHashes: readonly string[], externalIds: readonly string[]): Promise<DirectoryMatches> {
  const byEmailHash = new Map<string, string>();
  const byExternalId = new Map<string, string>();
  if (emailHashes.length === 0 && externalIds.length === 0) return { byEmailHash, byExternalId };
  const { rows } = await db.raw<{ rows: Array<{ member_id: string; email_hash: string | null; external_id: string | null }> }>(
    `SELECT member_id, email_hash, external_id FROM ${MEMBER_DIRECTORY}
      WHERE org_id = ? AND (email_hash = any(?::text[]) OR external_id = any(?::text[]))
      ORDER BY member_id`,
    [orgId, [...emailHashes], [...externalIds]],
  );
  const wantedHashes = new Set(emailHashes);
  const wantedIds = new Set(externalIds);
  for (const row of rows) {
    if (row.email_hash !== null && wantedHashes.has(row.email_hash) && !byEmailHash.has(row.email_hash)) byEmailHash.set(row.email_hash, row.member_id);
    if (row.external_id !== null && wantedIds.has(row.external_id) && !byExternalId.has(row.external_id)) byExternalId.set(row.external_id, row.member_id);
  }
  return { byEmailHash, byExternalId };
}
