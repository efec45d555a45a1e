// The reads behind a pass page: the batch by its token's hash (pass_batches), its passes in
// creation order (pass_list) and its facility's name, in one statement; then the batch's first
// PassCreated from the log and the batch's key, to open the guest's sealed data (names, QR
// values). A token that is
// malformed, unknown, or whose guest was erased (key destroyed) finds nothing: the page is a 404
// either way, so a visitor cannot tell an erased guest from a link that never existed.
import { DEFAULT_TIME_ZONE } from '../../shared/domain/time-zone.js';
import type { CommandDeps } from '../command-deps.js';
import type { GuestDetails, PassCreated, PassStatus, Sealed } from '../../shared/domain/events.js';
import type { SubjectKey } from '../../shared/crypto/subject-keys.js';
import { open } from '../../shared/crypto/sealed-box.js';
import { READ_MODELS, type PassBatchRow } from '../../shared/db/read-models.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import type { BatchPass } from './pass-page-model.js';

/** 192 random bits, base64url (create-passes.ts): 32 characters. */
const PASS_LINK_TOKEN = /^[A-Za-z0-9_-]{32}$/;

export function isPassLinkToken(value: string | undefined): value is string {
  return value !== undefined && PASS_LINK_TOKEN.test(value);
}

/** The batch's row, its facility's name and its passes (pass_id order), in one statement. */
const BATCH_SQL = `
SELECT b.batch_id, b.stream_name, b.stream_revision, b.arrival_date, b.arrival_time, b.valid_from, b.valid_until,
       f.name AS facility_name, f.time_zone AS facility_time_zone,
       (SELECT coalesce(json_agg(json_build_array(p.public_id, p.status, p.valid_until) ORDER BY p.pass_id), '[]')
          FROM ?? p WHERE p.batch_id = b.batch_id) AS passes
  FROM ?? b
  LEFT JOIN ?? f ON f.facility_id = b.facility_id
 WHERE b.link_hash = ?`;

type BatchRow = Pick<PassBatchRow, 'batch_id' | 'stream_name' | 'stream_revision' | 'arrival_date' | 'arrival_time' | 'valid_from' | 'valid_until'> & {
  facility_name: string | null;
  facility_time_zone: string | null;
  /** [public_id, status, valid_until as JSON text] */
  passes: Array<[string, PassStatus, string]>;
};

export interface PassBatch {
  readonly batchId: string;
  /** The guest-invites stream that holds the batch's passes (and takes their commands). */
  readonly streamName: string;
  readonly facilityName: string;
  /** The facility's IANA zone: the page shows its local time. */
  readonly timeZone: string;
  readonly arrivalDate: string;
  readonly arrivalTime: string | null;
  readonly validFrom: Date;
  readonly validUntil: Date;
  /** In creation order, with their QR values. */
  readonly passes: ReadonlyArray<BatchPass & { readonly qrValue: string }>;
  readonly guest: GuestDetails;
  /** The batch's subject key: what a registration is sealed under. */
  readonly key: SubjectKey;
}

/** The batch of `token`, or null for a malformed or unknown token, or an erased guest. */
export async function loadPassBatch(deps: Pick<CommandDeps, 'db' | 'store' | 'subjectKeys'>, token: string | undefined): Promise<PassBatch | null> {
  if (!isPassLinkToken(token)) return null; // no query for what cannot be a token
  // Three round trips, one after the other: the read models (the batch, its passes, the facility,
  // in one statement), the batch's first event from the log, the key that opens its guest data.
  const { rows } = (await deps.db.raw(BATCH_SQL, [READ_MODELS.passList, READ_MODELS.passBatches, READ_MODELS.facilities, sha256Hex(token)])) as { rows: BatchRow[] };
  const row = rows[0];
  if (row === undefined) return null;
  const events = await deps.store.readStream(row.stream_name, { fromRevision: row.stream_revision, maxCount: 1 });
  const created = events[0];
  if (created?.type !== 'PassCreated') return null;
  const data = created.data as PassCreated['data'];
  if (data.batchId !== row.batch_id) return null;
  const sealed: Sealed = data.guest;
  const key = (await deps.subjectKeys.getMany([sealed.keyId])).get(sealed.keyId);
  if (key === undefined) return null; // erased
  const guest = open<GuestDetails>(key, sealed);

  const passes = row.passes.flatMap(([publicId, status, validUntil]) => {
    const qrValue = guest.qrValues[publicId];
    return qrValue === undefined ? [] : [{ publicId, status, validUntil: new Date(validUntil), qrValue }];
  });
  return {
    batchId: row.batch_id,
    streamName: row.stream_name,
    facilityName: row.facility_name ?? 'the facility',
    timeZone: row.facility_time_zone ?? DEFAULT_TIME_ZONE,
    arrivalDate: row.arrival_date,
    arrivalTime: row.arrival_time,
    validFrom: row.valid_from,
    validUntil: row.valid_until,
    passes,
    guest,
    key: { keyId: sealed.keyId, key },
  };
}
