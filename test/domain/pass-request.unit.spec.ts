import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  createPassRequestSchema,
  isPassPublicId,
  parseCreatePassInput,
  type CreatePassInput,
} from '../../shared/domain/pass-request.js';
import { isCalendarDate, parseIsoInstant } from '../../shared/domain/iso-time.js';
import { ValidationError } from '../../shared/errors.js';

const now = new Date('2026-03-01T10:00:00.000Z');
const base = { first_name: 'Ada', email: 'ada@example.com', arrival_date: '2026-03-02', facility_id: 10 };

const parse = (overrides: Record<string, unknown> = {}, at = now): CreatePassInput => parseCreatePassInput({ ...base, ...overrides }, at);

function rejects(body: unknown, message: RegExp, at = now): ValidationError {
  let thrown: unknown;
  try {
    parseCreatePassInput(body, at);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a ValidationError').to.be.instanceOf(ValidationError);
  const error = thrown as ValidationError;
  expect(error.status).to.equal(400);
  expect(error.message).to.match(message);
  return error;
}
const rejectsWith = (overrides: Record<string, unknown>, message: RegExp) => rejects({ ...base, ...overrides }, message);

describe('create pass request', () => {
  describe('a minimal valid body', () => {
    it('is normalised with defaults: one pass, the whole arrival day, UTC', () => {
      expect(parse()).to.deep.equal({
        firstName: 'Ada',
        lastName: null,
        email: 'ada@example.com',
        phone: null,
        arrivalDate: '2026-03-02',
        arrivalTime: null,
        accessUntil: null,
        validFrom: '2026-03-02T00:00:00.000Z',
        validUntil: '2026-03-02T23:59:59.999Z',
        facilityId: 10,
        quantity: 1,
        country: null,
        vehicleNumber: null,
        notes: null,
        invitedBy: null,
      });
    });

    it('keeps every optional field, trimmed', () => {
      const input = parse({
        first_name: ' Ada ',
        last_name: ' Lovelace ',
        phone: '+44 20 7946 0958',
        arrival_time: '09:30',
        access_until: '2026-03-03',
        quantity: 3,
        country: ' GB ',
        vehicle_number: 'AB12 CDE',
        notes: 'Visitor badge at reception',
        invited_by: 'Grace',
      });
      expect(input).to.deep.include({
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '+442079460958',
        arrivalTime: '09:30',
        validFrom: '2026-03-02T09:30:00.000Z',
        validUntil: '2026-03-03T23:59:59.999Z',
        quantity: 3,
        country: 'GB',
        vehicleNumber: 'AB12 CDE',
        notes: 'Visitor badge at reception',
        invitedBy: 'Grace',
      });
    });

    it('treats null and blank optional fields as absent', () => {
      const input = parse({ last_name: null, phone: null, arrival_time: null, access_until: null, country: '  ', notes: null });
      expect(input).to.deep.include({ lastName: null, phone: null, arrivalTime: null, country: null, notes: null });
    });
  });

  describe('malformed bodies', () => {
    for (const body of [null, [], 'text', 42, true, undefined]) {
      it(`refuses ${JSON.stringify(body) ?? 'undefined'}`, () => rejects(body, /request body must be a JSON object/));
    }

    it('refuses unknown fields, naming them', () => {
      rejectsWith({ guest_name: 'x' }, /unknown field "guest_name"/);
      rejectsWith({ __proto__x: 1 }, /unknown field/);
    });

    it('lists every problem at once', () => {
      const error = rejects({ first_name: '', arrival_date: 'soon', quantity: 0, extra: 1 }, /;/);
      expect(error.details).to.include.members([
        'first_name must not be empty',
        'arrival_date must be YYYY-MM-DD or YYYY-MM-DDTHH:MM',
        'facility_id is required',
        `quantity must be an integer from 1 to 10`,
        'unknown field "extra"',
        'one of email or phone is required',
      ]);
    });
  });

  describe('first_name and last_name', () => {
    it('requires a first name that is not blank', () => {
      rejects({ ...base, first_name: undefined }, /first_name is required/);
      rejectsWith({ first_name: '   ' }, /first_name must not be blank/);
      rejectsWith({ first_name: 42 }, /first_name must be a string/);
    });

    it('allows 100 characters and refuses 101', () => {
      expect(parse({ first_name: 'a'.repeat(100), last_name: 'b'.repeat(100) }).firstName).to.have.length(100);
      rejectsWith({ first_name: 'a'.repeat(101) }, /first_name must be at most 100 characters/);
      rejectsWith({ last_name: 'b'.repeat(101) }, /last_name must be at most 100 characters/);
    });
  });

  describe('email and phone', () => {
    it('requires one of them', () => {
      rejects({ ...base, email: undefined }, /one of email or phone is required/);
      rejectsWith({ email: null, phone: null }, /one of email or phone is required/);
      rejectsWith({ email: null, phone: '  ' }, /phone must have 7 to 15 digits|one of email or phone/);
    });

    it('accepts a phone alone', () => {
      expect(parse({ email: undefined, phone: '0151 2345 678' })).to.deep.include({ email: null, phone: '01512345678' });
    });

    it('checks the email address', () => {
      rejectsWith({ email: 'not an email' }, /email must be a valid email address/);
      rejectsWith({ email: `${'a'.repeat(250)}@example.com` }, /email must be at most 254 characters/);
    });

    it('accepts 7 to 15 digits and refuses 6 and 16', () => {
      expect(parse({ phone: '1234567' }).phone).to.equal('1234567');
      expect(parse({ phone: '+123456789012345' }).phone).to.equal('+123456789012345');
      rejectsWith({ phone: '123456' }, /phone must have 7 to 15 digits/);
      rejectsWith({ phone: '+1234567890123456' }, /phone must have 7 to 15 digits/);
    });

    it('normalises separators, keeping a leading +', () => {
      expect(parse({ phone: '+1 (555) 010-9999' }).phone).to.equal('+15550109999');
      expect(parse({ phone: '030.1234.5678' }).phone).to.equal('03012345678');
    });

    it('refuses letters, a + not in front, and other symbols', () => {
      for (const phone of ['555-CALL-NOW', '12+3456789', '++4915112345678', '1234567#', '+49/151/2345678']) {
        rejectsWith({ phone }, /phone must have 7 to 15 digits/);
      }
    });
  });

  describe('arrival_date and arrival_time', () => {
    it('requires an arrival date in YYYY-MM-DD or YYYY-MM-DDTHH:MM', () => {
      rejects({ ...base, arrival_date: undefined }, /arrival_date is required/);
      for (const arrival_date of ['02.03.2026', '2026-3-2', '2026-03-02T09:30:00', '2026-03-02T09:30Z', '2026-03-02 09:30', '']) {
        rejectsWith({ arrival_date }, /arrival_date must be YYYY-MM-DD or YYYY-MM-DDTHH:MM/);
      }
    });

    it('accepts only real calendar dates', () => {
      rejectsWith({ arrival_date: '2026-02-30' }, /not a real calendar date/);
      rejectsWith({ arrival_date: '2026-02-29' }, /not a real calendar date/);
      rejectsWith({ arrival_date: '2026-13-01' }, /not a real calendar date/);
      rejectsWith({ arrival_date: '2026-04-31' }, /not a real calendar date/);
      rejectsWith({ arrival_date: '2026-03-00' }, /not a real calendar date/);
      expect(parse({ arrival_date: '2028-02-29' }).arrivalDate).to.equal('2028-02-29');
    });

    it('lets the T form seed arrival_time', () => {
      expect(parse({ arrival_date: '2026-03-02T14:05' })).to.deep.include({
        arrivalDate: '2026-03-02',
        arrivalTime: '14:05',
        validFrom: '2026-03-02T14:05:00.000Z',
        validUntil: '2026-03-02T23:59:59.999Z',
      });
    });

    it('refuses an impossible time in the T form', () => {
      rejectsWith({ arrival_date: '2026-03-02T24:00' }, /time in arrival_date must be HH:MM/);
      rejectsWith({ arrival_date: '2026-03-02T12:60' }, /time in arrival_date must be HH:MM/);
    });

    it('accepts arrival_time in HH:MM only', () => {
      expect(parse({ arrival_time: '00:00' }).validFrom).to.equal('2026-03-02T00:00:00.000Z');
      expect(parse({ arrival_time: '23:59' }).validFrom).to.equal('2026-03-02T23:59:00.000Z');
      for (const arrival_time of ['9:30', '24:00', '12:60', '12:30:00', '0930', 930]) {
        rejectsWith({ arrival_time }, /arrival_time must be (HH:MM|a string)/);
      }
    });

    it('accepts both forms when they agree and refuses them when they conflict', () => {
      expect(parse({ arrival_date: '2026-03-02T14:05', arrival_time: '14:05' }).arrivalTime).to.equal('14:05');
      rejectsWith({ arrival_date: '2026-03-02T14:05', arrival_time: '15:00' }, /arrival_time 15:00 conflicts with the time 14:05/);
    });
  });

  describe('access_until', () => {
    it('defaults to the end of the arrival day', () => {
      expect(parse().validUntil).to.equal('2026-03-02T23:59:59.999Z');
    });

    it('as a date means the end of that day', () => {
      expect(parse({ access_until: '2026-03-05' }).validUntil).to.equal('2026-03-05T23:59:59.999Z');
      expect(parse({ access_until: '2026-03-02' }).validUntil).to.equal('2026-03-02T23:59:59.999Z');
    });

    it('as a date-time is UTC unless it carries a zone', () => {
      expect(parse({ access_until: '2026-03-02T18:00' }).validUntil).to.equal('2026-03-02T18:00:00.000Z');
      expect(parse({ access_until: '2026-03-02T18:00:30.5Z' }).validUntil).to.equal('2026-03-02T18:00:30.500Z');
      expect(parse({ access_until: '2026-03-02T18:00:00+02:00' }).validUntil).to.equal('2026-03-02T16:00:00.000Z');
    });

    it('must not precede the arrival date', () => {
      rejectsWith({ access_until: '2026-03-01' }, /access_until must not precede arrival_date/);
      rejectsWith({ access_until: '2026-03-01T23:59' }, /access_until must not precede arrival_date/);
    });

    it('must be after the arrival time', () => {
      rejectsWith({ arrival_time: '12:00', access_until: '2026-03-02T11:00' }, /access_until must be after the arrival time/);
      rejectsWith({ arrival_time: '12:00', access_until: '2026-03-02T12:00' }, /access_until must be after the arrival time/);
    });

    it('ends by 9999-12-31 in UTC, the last instant the log can hold', () => {
      expect(parse({ access_until: '9999-12-31' }).validUntil).to.equal('9999-12-31T23:59:59.999Z');
      expect(parse({ access_until: '9999-12-31T23:00+02:00' }).validUntil).to.equal('9999-12-31T21:00:00.000Z');
      rejectsWith({ access_until: '9999-12-31T23:00-02:00' }, /access_until 9999-12-31T23:00-02:00 is not a real date or time up to 9999-12-31/);
    });

    it('refuses malformed values and impossible dates', () => {
      rejectsWith({ access_until: 'tomorrow' }, /access_until must be YYYY-MM-DD/);
      rejectsWith({ access_until: '2026-03-02 18:00' }, /access_until must be YYYY-MM-DD/);
      rejectsWith({ access_until: '2026-02-30' }, /not a real date or time/);
      rejectsWith({ access_until: '2026-03-02T25:00' }, /not a real date or time/);
      rejectsWith({ access_until: 20260302 }, /access_until must be a string/);
    });
  });

  describe('passes already over', () => {
    it('refuses a window that ended before now', () => {
      rejectsWith({ arrival_date: '2026-02-28' }, /already have expired/);
      rejectsWith({ arrival_date: '2026-03-01', access_until: '2026-03-01T09:00' }, /already have expired/);
    });

    it('accepts a window that started earlier but is still open', () => {
      expect(parse({ arrival_date: '2026-03-01' }).validUntil).to.equal('2026-03-01T23:59:59.999Z');
      expect(parse({ arrival_date: '2026-02-20', access_until: '2026-03-10' }).validFrom).to.equal('2026-02-20T00:00:00.000Z');
    });
  });

  describe('facility_id', () => {
    it('is a required positive integer', () => {
      rejects({ ...base, facility_id: undefined }, /facility_id is required/);
      rejectsWith({ facility_id: '10' }, /facility_id must be an integer/);
      rejectsWith({ facility_id: 1.5 }, /facility_id must be an integer/);
      rejectsWith({ facility_id: 0 }, /facility_id must be a positive integer/);
      rejectsWith({ facility_id: -3 }, /facility_id must be a positive integer/);
    });
  });

  describe('quantity', () => {
    it('defaults to 1 and accepts 1 to 10', () => {
      expect(parse().quantity).to.equal(1);
      expect(parse({ quantity: 1 }).quantity).to.equal(1);
      expect(parse({ quantity: 10 }).quantity).to.equal(10);
    });

    it('refuses 0, 11, fractions and strings', () => {
      rejectsWith({ quantity: 0 }, /quantity must be an integer from 1 to 10/);
      rejectsWith({ quantity: 11 }, /quantity must be an integer from 1 to 10/);
      rejectsWith({ quantity: 2.5 }, /quantity must be an integer/);
      rejectsWith({ quantity: '2' }, /quantity must be an integer/);
    });
  });

  describe('guest metadata', () => {
    it('caps lengths', () => {
      expect(parse({ notes: 'n'.repeat(1000) }).notes).to.have.length(1000);
      rejectsWith({ notes: 'n'.repeat(1001) }, /notes must be at most 1000 characters/);
      rejectsWith({ country: 'c'.repeat(101) }, /country must be at most 100 characters/);
      rejectsWith({ vehicle_number: 'v'.repeat(33) }, /vehicle_number must be at most 32 characters/);
      rejectsWith({ invited_by: 'i'.repeat(101) }, /invited_by must be at most 100 characters/);
    });

    it('must be strings', () => {
      rejectsWith({ notes: { text: 'x' } }, /notes must be a string/);
      rejectsWith({ invited_by: ['x'] }, /invited_by must be a string/);
    });
  });

  describe('the exported schema', () => {
    it('compiles in a default draft-07 ajv, as the HTTP layer and OpenAPI use it', () => {
      const ajv = new Ajv({ allErrors: true, strict: false });
      addFormatsModule.default(ajv);
      const validate = ajv.compile(createPassRequestSchema);
      expect(validate(base)).to.equal(true);
      expect(validate({ ...base, unknown: 1 })).to.equal(false);
      expect(validate({ ...base, email: undefined })).to.equal(false);
    });
  });

  describe('helpers', () => {
    it('isCalendarDate knows leap years', () => {
      expect(isCalendarDate(2000, 2, 29)).to.equal(true);
      expect(isCalendarDate(1900, 2, 29)).to.equal(false);
      expect(isCalendarDate(2024, 2, 29)).to.equal(true);
      expect(isCalendarDate(2026, 2, 29)).to.equal(false);
    });

    it('parseIsoInstant is strict where Date.parse is not', () => {
      expect(parseIsoInstant('2026-02-30T00:00:00Z')).to.equal(null);
      expect(parseIsoInstant('2026-03-01T00:00:00+14:60')).to.equal(null);
      expect(parseIsoInstant('0099-01-01')?.time).to.equal(Date.parse('0099-01-01T00:00:00Z'));
      expect(parseIsoInstant('2026-03-01T01:00-01:30')).to.deep.equal({ time: Date.parse('2026-03-01T02:30:00Z'), dateOnly: false, hasZone: true });
    });

    it('isPassPublicId accepts only gst_ and 32 lowercase hex', () => {
      expect(isPassPublicId(`gst_${'a1'.repeat(16)}`)).to.equal(true);
      expect(isPassPublicId(`gst_${'A1'.repeat(16)}`)).to.equal(false);
      expect(isPassPublicId('gst_123')).to.equal(false);
      expect(isPassPublicId(`pass_${'a1'.repeat(16)}`)).to.equal(false);
    });
  });
});
