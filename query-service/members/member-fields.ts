// Field selection of the member endpoints (spec, "Field selection"): the Member fields by tier,
// and the `fields` parameter read against what the credential may see. An unknown field is 400
// naming the allowed fields; a contact field without the contact tier is 403 insufficient_scope
// naming org:members:contact:read. Omitted `fields` is every field of the credential's tier.
import { InsufficientScopeError, ValidationError } from '../../shared/errors.js';
import type { Principal } from '../../shared/auth/principal.js';

export const BASIC_MEMBER_FIELDS = ['id', 'name', 'first_name', 'last_name', 'job_title', 'department', 'status', 'created_at'] as const;
export const CONTACT_MEMBER_FIELDS = ['email', 'phone'] as const;
export const MEMBER_FIELDS = [...BASIC_MEMBER_FIELDS, ...CONTACT_MEMBER_FIELDS] as const;
export type MemberField = (typeof MEMBER_FIELDS)[number];

export const MEMBERS_READ_SCOPE = 'org:members:read';
export const MEMBERS_CONTACT_SCOPE = 'org:members:contact:read';

/** basic: org:members:read; contact: basic plus email and phone. */
export type MemberTier = 'basic' | 'contact';

/**
 * The tier of an authenticated principal: an API key by its scopes; a user token (members:read
 * with the employee-view role, checked by its middleware) sees the full field set.
 */
export function memberTierOf(principal: Principal): MemberTier {
  if (principal.kind === 'user') return 'contact';
  return principal.scopes.includes(MEMBERS_CONTACT_SCOPE) ? 'contact' : 'basic';
}

const isContactField = (field: string) => (CONTACT_MEMBER_FIELDS as readonly string[]).includes(field);

/** The fields to answer with, in the Member table's order. */
export function selectMemberFields(raw: string | undefined, tier: MemberTier): MemberField[] {
  if (raw === undefined) return tier === 'contact' ? [...MEMBER_FIELDS] : [...BASIC_MEMBER_FIELDS];
  const requested = raw.split(',').map((f) => f.trim());
  if (requested.some((f) => f === '')) {
    throw new ValidationError(`'fields' must be a comma-separated list of Member fields: ${MEMBER_FIELDS.join(', ')}`);
  }
  const unknown = [...new Set(requested.filter((f) => !(MEMBER_FIELDS as readonly string[]).includes(f)))];
  if (unknown.length > 0) {
    throw new ValidationError(
      `unknown member field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `'${f}'`).join(', ')}; allowed fields: ${MEMBER_FIELDS.join(', ')}`,
      unknown.map((f) => `unknown member field '${f}'`),
    );
  }
  if (tier !== 'contact' && requested.some(isContactField)) throw new InsufficientScopeError(MEMBERS_CONTACT_SCOPE);
  const set = new Set(requested);
  return MEMBER_FIELDS.filter((f) => set.has(f));
}

export const wantsContact = (fields: readonly MemberField[]) => fields.some(isContactField);
