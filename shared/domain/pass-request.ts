// The create-pass request body (spec "Create request body"), shared by POST /api/v1/passes and
// POST /api/v1/org/passes: one JSON Schema for ajv and the OpenAPI document, and the parser that
// adds what a schema cannot say (real calendar dates, the validity window, field consistency).
//
// Choices the spec leaves open, made here:
// * Times are the facility's local time (its IANA zone, UTC when unset): `arrival_date`/
//   `arrival_time` and a zone-less `access_until` are wall-clock times there. An `access_until`
//   with `Z` or an offset is honoured as given. Parsing (parseCreatePassRequest) needs no zone;
//   the window is resolved (resolvePassWindow) once the use case has loaded the facility:
//   valid_from  = arrival date + arrival_time (or 00:00), local
//   valid_until = access_until, or the end of the arrival day (the last millisecond before the
//   next local midnight: a day of a clock change is 23 or 25 hours long)
// * `access_until` is a date (`YYYY-MM-DD`, meaning the end of that day) or a date-time
//   (`YYYY-MM-DDTHH:MM`, optional `:SS[.sss]`, optional `Z`/`±HH:MM`). It must not precede the
//   arrival date, and must be after the arrival time. A window that has already ended is refused.
// * `arrival_date` in the `T` form seeds `arrival_time`. When both give a time, they must agree.
// * phone: 7 to 15 digits, with an optional leading `+` and any of space, `-`, `.`, `(`, `)` as
//   separators; normalised to the digits with the `+` kept (`+49 151 234-567` -> `+49151234567`).
// * Optional fields accept `null` as "absent"; strings are trimmed; a blank optional string is absent.
// * Unknown fields are refused (400), as are whitespace-only first names.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from '../errors.js';
import { MAX_PASSES_PER_BATCH, PASS_PUBLIC_ID_PATTERN } from './pass-constants.js';
import { LATEST_INSTANT_MS, isCalendarDate, parseIsoInstant, utcMillis } from './iso-time.js';
import { DEFAULT_TIME_ZONE, zonedInstant } from './time-zone.js';
import { carriesLink } from './link-free-text.js';

export const PASS_FIELD_LIMITS = {
  first_name: 100,
  last_name: 100,
  email: 254,
  phone: 32, // characters including separators; the digit count is 7 to 15
  country: 100,
  vehicle_number: 32,
  notes: 1000,
  invited_by: 100,
} as const;

const PUBLIC_ID = new RegExp(PASS_PUBLIC_ID_PATTERN);
export function isPassPublicId(value: string): boolean {
  return PUBLIC_ID.test(value);
}

// 7 to 15 digits, each optionally preceded by separators; optional leading `+`.
const PHONE_PATTERN = '^\\+?(?:[ ().-]*[0-9]){7,15}[ ().-]*$';
const ARRIVAL_DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2})?$';
const TIME_PATTERN = '^([01]\\d|2[0-3]):[0-5]\\d$';
const TIME = new RegExp(TIME_PATTERN);
const ACCESS_UNTIL_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2})?)?$';

const optionalString = (maxLength: number, description: string) =>
  ({ type: ['string', 'null'], maxLength, description }) as const;

/**
 * JSON Schema of the body. Only keywords common to draft-07 and 2020-12 (as OpenAPI 3.1 uses),
 * with `type: [..., 'null']` unions: an ajv instance compiling it needs `allowUnionTypes` (or
 * non-strict types) and ajv-formats for `email`.
 */
export const createPassRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['first_name', 'arrival_date', 'facility_id'],
  properties: {
    first_name: { type: 'string', minLength: 1, maxLength: PASS_FIELD_LIMITS.first_name, pattern: '\\S', description: 'Guest first name. A link or an address (URL, www., e-mail, domain) is refused.' },
    last_name: optionalString(PASS_FIELD_LIMITS.last_name, 'Guest last name. A link or an address is refused.'),
    email: {
      type: ['string', 'null'],
      format: 'email',
      maxLength: PASS_FIELD_LIMITS.email,
      description: 'Delivery channel for the pass email. One of email or phone is required.',
    },
    phone: {
      type: ['string', 'null'],
      maxLength: PASS_FIELD_LIMITS.phone,
      pattern: PHONE_PATTERN,
      description: 'Delivery channel for the pass SMS: 7 to 15 digits, optional leading +, separators allowed. One of email or phone is required.',
    },
    arrival_date: {
      type: 'string',
      pattern: ARRIVAL_DATE_PATTERN,
      description: "`YYYY-MM-DD` in the facility's time zone, or `YYYY-MM-DDTHH:MM` whose time seeds `arrival_time`.",
    },
    arrival_time: { type: ['string', 'null'], pattern: TIME_PATTERN, description: "`HH:MM` in the facility's time zone; access starts then. Default: start of the arrival day there." },
    access_until: {
      type: ['string', 'null'],
      pattern: ACCESS_UNTIL_PATTERN,
      description: "Pass expiry: `YYYY-MM-DD` (end of that day) or a date-time, in the facility's time zone unless `Z` or an offset is given. Default: end of the arrival day there. Must not precede the arrival.",
    },
    facility_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'An active facility of the organization.' },
    quantity: { type: 'integer', minimum: 1, maximum: MAX_PASSES_PER_BATCH, default: 1, description: 'Number of passes, each with its own QR value.' },
    country: optionalString(PASS_FIELD_LIMITS.country, 'Guest metadata.'),
    vehicle_number: optionalString(PASS_FIELD_LIMITS.vehicle_number, 'Guest metadata.'),
    notes: optionalString(PASS_FIELD_LIMITS.notes, 'Guest metadata.'),
    invited_by: optionalString(PASS_FIELD_LIMITS.invited_by, 'Display name shown to the guest. A link or an address is refused.'),
  },
  anyOf: [{ required: ['email'] }, { required: ['phone'] }],
} as const;

/** The request, normalised, before its window is resolved in the facility's zone. */
export interface CreatePassRequest {
  readonly firstName: string;
  readonly lastName: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  /** `YYYY-MM-DD`. */
  readonly arrivalDate: string;
  /** `HH:MM`, from `arrival_time` or the `T` form of `arrival_date`; null when neither gave one. */
  readonly arrivalTime: string | null;
  /** As given (a real date or instant): a local wall-clock time unless it carries Z or an offset. */
  readonly accessUntil: string | null;
  readonly facilityId: number;
  readonly quantity: number;
  readonly country: string | null;
  readonly vehicleNumber: string | null;
  readonly notes: string | null;
  readonly invitedBy: string | null;
}

/** The request with its validity window: what a pass is built from. */
export interface CreatePassInput extends CreatePassRequest {
  /** ISO 8601 UTC. */
  readonly validFrom: string;
  /** ISO 8601 UTC. */
  readonly validUntil: string;
}

const addFormats = addFormatsModule.default;
// strictRequired off: the anyOf branches name properties declared at the top level, on purpose.
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
addFormats(ajv, ['email']);
const validateBody = ajv.compile(createPassRequestSchema);

type Field = keyof typeof createPassRequestSchema.properties;

/** What to say when a field breaks its pattern, format or range. */
const FIELD_RULES: Partial<Record<Field, string>> = {
  first_name: 'first_name must not be blank',
  email: 'email must be a valid email address',
  phone: 'phone must have 7 to 15 digits (an optional leading +, spaces, dashes, dots and parentheses are allowed)',
  arrival_date: 'arrival_date must be YYYY-MM-DD or YYYY-MM-DDTHH:MM',
  arrival_time: 'arrival_time must be HH:MM (24-hour)',
  access_until: 'access_until must be YYYY-MM-DD or YYYY-MM-DDTHH:MM (optionally with seconds and Z or an offset)',
  facility_id: 'facility_id must be a positive integer',
  quantity: `quantity must be an integer from 1 to ${MAX_PASSES_PER_BATCH}`,
};

function messageOf(error: ErrorObject): string {
  const field = error.instancePath.split('/')[1] ?? '';
  switch (error.keyword) {
    case 'additionalProperties':
      return `unknown field "${String(error.params.additionalProperty)}"`;
    case 'required':
      return `${String(error.params.missingProperty)} is required`;
    case 'type': {
      const type = String(error.params.type).split(',')[0];
      return `${field} must be ${type === 'integer' ? 'an integer' : `a ${type}`}`;
    }
    case 'maxLength':
      return `${field} must be at most ${String(error.params.limit)} characters`;
    case 'minLength':
      return `${field} must not be empty`;
    default:
      return FIELD_RULES[field as Field] ?? `${field || 'body'} is invalid`;
  }
}

function schemaErrors(errors: readonly ErrorObject[]): string[] {
  const messages = new Set<string>();
  for (const error of errors) {
    // The anyOf branches report "email is required" and "phone is required"; say it once, plainly.
    if (error.schemaPath.startsWith('#/anyOf')) messages.add('one of email or phone is required');
    else messages.add(messageOf(error));
  }
  return [...messages];
}

function fail(details: readonly string[]): never {
  throw new ValidationError(details.join('; '), details);
}

function cleanString(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed : null;
}

const NAME_FIELDS = ['first_name', 'last_name', 'invited_by'] as const;

/** The day after `date` (YYYY-MM-DD), by the calendar. */
function nextDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const next = new Date(utcMillis(y, m, d) + 24 * 60 * 60 * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(next.getUTCFullYear(), 4)}-${pad(next.getUTCMonth() + 1)}-${pad(next.getUTCDate())}`;
}

/** The last millisecond of `date` in `zone` (never past LATEST_INSTANT_MS). */
function endOfDay(zone: string, date: string): number {
  return Math.min(zonedInstant(zone, nextDay(date)).getTime() - 1, LATEST_INSTANT_MS);
}

/**
 * Validates and normalises a create-pass body (no zone needed). Throws ValidationError listing
 * every problem the schema finds, or the first rule between fields that fails.
 */
export function parseCreatePassRequest(body: unknown): CreatePassRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail(['request body must be a JSON object']);
  const b = body as Record<string, unknown>;
  if (!validateBody(b)) fail(schemaErrors(validateBody.errors ?? []));
  // The guest reads these beside the pass link, in the service's own email and SMS.
  const linked = NAME_FIELDS.filter((field) => typeof b[field] === 'string' && carriesLink(b[field]));
  if (linked.length > 0) fail(linked.map((field) => `${field} must be a name, not a link or an address`));

  const email = cleanString(b.email);
  const phoneText = cleanString(b.phone);
  if (email === null && phoneText === null) fail(['one of email or phone is required']);
  const phone = phoneText === null ? null : (phoneText.startsWith('+') ? '+' : '') + phoneText.replace(/\D/g, '');

  // arrival_date: the pattern held; now the calendar and the time part.
  const arrivalText = b.arrival_date as string;
  const arrivalDate = arrivalText.slice(0, 10);
  const [year, month, day] = arrivalDate.split('-').map(Number) as [number, number, number];
  if (!isCalendarDate(year, month, day)) fail([`arrival_date ${arrivalDate} is not a real calendar date`]);
  const seededTime = arrivalText.length > 10 ? arrivalText.slice(11) : null;
  if (seededTime !== null && !TIME.test(seededTime)) fail(['the time in arrival_date must be HH:MM (24-hour)']);
  const givenTime = cleanString(b.arrival_time);
  if (seededTime !== null && givenTime !== null && seededTime !== givenTime) {
    fail([`arrival_time ${givenTime} conflicts with the time ${seededTime} given in arrival_date`]);
  }
  const arrivalTime = givenTime ?? seededTime;

  const accessUntil = cleanString(b.access_until);
  if (accessUntil !== null && !parseIsoInstant(accessUntil)) fail([`access_until ${accessUntil} is not a real date or time up to 9999-12-31`]);

  return {
    firstName: cleanString(b.first_name)!,
    lastName: cleanString(b.last_name),
    email,
    phone,
    arrivalDate,
    arrivalTime,
    accessUntil,
    facilityId: b.facility_id as number,
    quantity: (b.quantity as number | undefined) ?? 1,
    country: cleanString(b.country),
    vehicleNumber: cleanString(b.vehicle_number),
    notes: cleanString(b.notes),
    invitedBy: cleanString(b.invited_by),
  };
}

/**
 * The validity window of `request` at a facility in `zone` (IANA): its wall-clock times read
 * there. Throws ValidationError when the window is empty or has already ended at `now`.
 */
export function resolvePassWindow(request: CreatePassRequest, zone: string, now: Date): CreatePassInput {
  const dayStart = zonedInstant(zone, request.arrivalDate).getTime();
  const validFrom = zonedInstant(zone, request.arrivalDate, request.arrivalTime ?? '00:00').getTime();
  let validUntil = endOfDay(zone, request.arrivalDate);
  if (request.accessUntil !== null) {
    const until = parseIsoInstant(request.accessUntil);
    if (!until) fail([`access_until ${request.accessUntil} is not a real date or time up to 9999-12-31`]);
    const date = request.accessUntil.slice(0, 10);
    if (until.hasZone) validUntil = until.time;
    else if (until.dateOnly) validUntil = endOfDay(zone, date);
    else {
      // Seconds and fractions ride on the local HH:MM.
      const [y, m, d] = date.split('-').map(Number) as [number, number, number];
      const [hh, mm] = request.accessUntil.slice(11, 16).split(':').map(Number) as [number, number];
      const extra = until.time - utcMillis(y, m, d, hh, mm);
      validUntil = Math.min(zonedInstant(zone, date, request.accessUntil.slice(11, 16)).getTime() + extra, LATEST_INSTANT_MS);
    }
    if (validUntil < dayStart) fail(['access_until must not precede arrival_date']);
    if (validUntil <= validFrom) fail(['access_until must be after the arrival time']);
  }
  if (validUntil <= now.getTime()) fail(['the pass would already have expired: access ends before now']);
  return { ...request, validFrom: new Date(validFrom).toISOString(), validUntil: new Date(validUntil).toISOString() };
}

/** Parse and resolve in one step, for a caller that knows the zone (UTC by default). */
export function parseCreatePassInput(body: unknown, now: Date, zone: string = DEFAULT_TIME_ZONE): CreatePassInput {
  return resolvePassWindow(parseCreatePassRequest(body), zone, now);
}
