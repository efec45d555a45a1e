// A member_directory row as the API shows it: only the selected fields, contact opened only when
// asked for (and so only for the contact tier). The contact is stored sealed under the member's
// contact key; the keys of a whole page are fetched in ONE key-store query. A destroyed key (an
// erased member) reads as email and phone null. Never shown: user_id, external_id, the hashes,
// the sealed box itself.
import type { Knex } from 'knex';
import { READ_MODELS, type MemberDirectoryRow } from '../../shared/db/read-models.js';
import type { SubjectKeyStore } from '../../shared/crypto/subject-keys.js';
import { open } from '../../shared/crypto/sealed-box.js';
import type { MemberContact } from '../../shared/domain/member-events.js';
import { wantsContact, type MemberField } from './member-fields.js';

/** The columns a Member is made of (never user_id, external_id or the hashes), and the cursor's exact timestamp. */
export type MemberItemRow = Pick<
  MemberDirectoryRow,
  'member_id' | 'name' | 'first_name' | 'last_name' | 'job_title' | 'department' | 'status' | 'created_at' | 'contact'
> & { cursor_at: string };

export type MemberItem = Partial<Record<MemberField, string | null>>;

/** The select list of member queries; the sealed contact only when contact fields are asked for. */
export function memberColumns(db: Knex, fields: readonly MemberField[]): Array<string | Knex.Raw> {
  return [
    'member_id',
    'name',
    'first_name',
    'last_name',
    'job_title',
    'department',
    'status',
    'created_at',
    ...(wantsContact(fields) ? ['contact'] : []),
    db.raw(`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`),
  ];
}

export const memberDirectory = (db: Knex) => db<MemberDirectoryRow>(READ_MODELS.memberDirectory);

/** Opens the rows' contacts with one key-store query; absent from the map: no contact, or its key is destroyed. */
export async function openContacts(rows: readonly MemberItemRow[], keys: SubjectKeyStore): Promise<Map<string, MemberContact>> {
  const sealed = rows.filter((r) => r.contact);
  const opened = new Map<string, MemberContact>();
  if (sealed.length === 0) return opened;
  const found = await keys.getMany([...new Set(sealed.map((r) => r.contact!.keyId))]);
  for (const row of sealed) {
    const key = found.get(row.contact!.keyId);
    if (key) opened.set(row.member_id, open<MemberContact>(key, row.contact!));
  }
  return opened;
}

export function toMemberItem(row: MemberItemRow, fields: readonly MemberField[], contacts: ReadonlyMap<string, MemberContact>): MemberItem {
  const contact = contacts.get(row.member_id);
  const item: MemberItem = {};
  for (const field of fields) {
    switch (field) {
      case 'id':
        item.id = row.member_id;
        break;
      case 'created_at':
        item.created_at = row.created_at ? new Date(row.created_at).toISOString() : null;
        break;
      case 'email':
        item.email = contact?.email ?? null;
        break;
      case 'phone':
        item.phone = contact?.phone ?? null;
        break;
      default:
        item[field] = row[field];
    }
  }
  return item;
}
