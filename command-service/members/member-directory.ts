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
  // One index probe per value (LATERAL, kept apart by its ORDER BY), whatever the statistics say:
  // during an import they lag far behind the table, and a plan made on them read every row of
  // the organization for each chunk.
  const { rows } = await db.raw<{ rows: Array<{ member_id: string; email_hash: string | null; external_id: string | null }> }>(
    `SELECT d.* FROM unnest(?::text[]) AS h(email_hash) CROSS JOIN LATERAL (
       SELECT member_id, email_hash, external_id FROM ${MEMBER_DIRECTORY} m
        WHERE m.org_id = ? AND m.email_hash = h.email_hash ORDER BY m.member_id) d
     UNION ALL
     SELECT d.* FROM unnest(?::text[]) AS x(external_id) CROSS JOIN LATERAL (
       SELECT member_id, email_hash, external_id FROM ${MEMBER_DIRECTORY} m
        WHERE m.org_id = ? AND m.external_id = x.external_id ORDER BY m.member_id) d
     ORDER BY member_id`,
    [[...emailHashes], orgId, [...externalIds], orgId],
  );
  const wantedHashes = new Set(emailHashes);
  const wantedIds = new Set(externalIds);
  for (const row of rows) {
    if (row.email_hash !== null && wantedHashes.has(row.email_hash) && !byEmailHash.has(row.email_hash)) byEmailHash.set(row.email_hash, row.member_id);
    if (row.external_id !== null && wantedIds.has(row.external_id) && !byExternalId.has(row.external_id)) byExternalId.set(row.external_id, row.member_id);
  }
  return { byEmailHash, byExternalId };
}
