// A member's profile as an operator or an HR file gives it (CLI `member add|update|import`):
// checked and normalised here, before anything is sealed or decided. Pure.
//
// * first_name, last_name: required, trimmed, 1 to 100 characters.
// * email: optional; trimmed and lower-cased, a real address (ajv-formats' `email`, as
//   pass-request.ts checks a guest's), at most 254 characters.
// * phone: optional; 7 to 15 digits, an optional leading `+` and any of space, `-`, `.`, `(`, `)`
//   as separators; normalised to the digits with the `+` kept (`+49 151 234-567` -> `+49151234567`).
// * job_title, department, external_id: optional, trimmed, at most 200 characters.
// * A blank optional value (empty, or only spaces) is absent (null).
// Messages name the field as the CSV header and the API do (`email: not an address`).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from '../errors.js';
import { MAX_MEMBER_NAME_LENGTH, MAX_MEMBER_TEXT_LENGTH, type MemberContact, type MemberName } from './member-events.js';

export const MAX_MEMBER_EMAIL_LENGTH = 254;
/** Characters including separators; the digit count is 7 to 15. */
export const MAX_MEMBER_PHONE_LENGTH = 32;
const PHONE = /^\+?(?:[ ().-]*[0-9]){7,15}[ ().-]*$/;

const addFormats = addFormatsModule.default;
const ajv = new Ajv2020({ strict: true });
addFormats(ajv, ['email']);
const isEmailAddress = ajv.compile<string>({ type: 'string', format: 'email' });

/** What a caller gives: undefined or null or blank for an absent optional field. */
export interface MemberProfileInput {
  readonly firstName?: string | null;
  readonly lastName?: string | null;
  readonly email?: string | null;
  readonly phone?: string | null;
  readonly jobTitle?: string | null;
  readonly department?: string | null;
  readonly externalId?: string | null;
}

/** A checked, normalised profile: what a member event records (names and contact sealed). */
export interface MemberProfile {
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string | null;
  readonly phone: string | null;
  readonly jobTitle: string | null;
  readonly department: string | null;
  readonly externalId: string | null;
}

/** The profile's field names as the CSV header, the API and the messages spell them. */
export const MEMBER_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'job_title', 'department', 'external_id'] as const;
export type MemberField = (typeof MEMBER_FIELDS)[number];

function clean(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed : null;
}

/**
 * Checks and normalises a whole profile. Throws one ValidationError whose `details` hold one
 * `field: problem` line per broken field, in field order.
 */
export function parseMemberProfile(input: MemberProfileInput): MemberProfile {
  const problems: string[] = [];
  const name = (field: MemberField, value: string | null | undefined): string => {
    const text = clean(value);
    if (text === null) problems.push(`${field}: required`);
    else if (text.length > MAX_MEMBER_NAME_LENGTH) problems.push(`${field}: at most ${MAX_MEMBER_NAME_LENGTH} characters`);
    return text ?? '';
  };
  const text = (field: MemberField, value: string | null | undefined): string | null => {
    const t = clean(value);
    if (t !== null && t.length > MAX_MEMBER_TEXT_LENGTH) problems.push(`${field}: at most ${MAX_MEMBER_TEXT_LENGTH} characters`);
    return t;
  };

  const firstName = name('first_name', input.firstName);
  const lastName = name('last_name', input.lastName);

  const email = clean(input.email)?.toLowerCase() ?? null;
  if (email !== null) {
    if (email.length > MAX_MEMBER_EMAIL_LENGTH) problems.push(`email: at most ${MAX_MEMBER_EMAIL_LENGTH} characters`);
    else if (!isEmailAddress(email)) problems.push('email: not an address');
  }

  let phone = clean(input.phone);
  if (phone !== null) {
    if (phone.length > MAX_MEMBER_PHONE_LENGTH || !PHONE.test(phone)) {
      problems.push('phone: must have 7 to 15 digits (an optional leading +, spaces, dashes, dots and parentheses are allowed)');
    } else {
      phone = (phone.startsWith('+') ? '+' : '') + phone.replace(/\D/g, '');
    }
  }

  const jobTitle = text('job_title', input.jobTitle);
  const department = text('department', input.department);
  const externalId = text('external_id', input.externalId);

  if (problems.length > 0) throw new ValidationError(problems.join('; '), problems);
  return { firstName, lastName, email, phone, jobTitle, department, externalId };
}

/** The part of a profile sealed under the member's name key. */
export function memberNameOf(profile: MemberProfile): MemberName {
  return { firstName: profile.firstName, lastName: profile.lastName };
}

/** The part sealed under the contact key; null when the member has neither an email nor a phone. */
export function memberContactOf(profile: Pick<MemberProfile, 'email' | 'phone'>): MemberContact | null {
  return profile.email === null && profile.phone === null ? null : { email: profile.email, phone: profile.phone };
}
