import { expect } from 'chai';
import { parseMemberProfile, type MemberProfileInput } from '../../shared/domain/member-input.js';
import { ValidationError } from '../../shared/errors.js';

function problems(input: MemberProfileInput): readonly string[] {
  try {
    parseMemberProfile(input);
  } catch (error) {
    expect(error).to.be.instanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error('expected a ValidationError');
}

describe('member input', () => {
  it('trims names and optional text, lower-cases the email, normalises the phone, and reads blanks as absent', () => {
    expect(
      parseMemberProfile({
        firstName: '  Ada ',
        lastName: 'Lovelace',
        email: ' Ada.Lovelace@Example.COM ',
        phone: '+44 (20) 7946-0012',
        jobTitle: '  ',
        department: ' R&D ',
        externalId: null,
      }),
    ).to.deep.equal({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada.lovelace@example.com',
      phone: '+442079460012',
      jobTitle: null,
      department: 'R&D',
      externalId: null,
    });
  });

  it('requires both names, 1 to 100 characters', () => {
    expect(problems({ firstName: ' ', lastName: 'L' })).to.deep.equal(['first_name: required']);
    expect(problems({ firstName: 'F' })).to.deep.equal(['last_name: required']);
    expect(problems({ firstName: 'x'.repeat(101), lastName: 'L' })).to.deep.equal(['first_name: at most 100 characters']);
    expect(parseMemberProfile({ firstName: 'x'.repeat(100), lastName: 'L' }).firstName).to.have.length(100);
  });

  it('refuses an email that is not an address, or longer than 254 characters', () => {
    for (const email of ['not-an-email', 'a@', '@b.example', 'a b@c.example', 'a@b@c.example']) {
      expect(problems({ firstName: 'F', lastName: 'L', email }), email).to.deep.equal(['email: not an address']);
    }
    expect(problems({ firstName: 'F', lastName: 'L', email: `${'a'.repeat(64)}@${'b'.repeat(190)}.example` })).to.deep.equal(['email: at most 254 characters']);
  });

  it('takes a phone of 7 to 15 digits with an optional + and separators', () => {
    expect(parseMemberProfile({ firstName: 'F', lastName: 'L', phone: '1234567' }).phone).to.equal('1234567');
    expect(parseMemberProfile({ firstName: 'F', lastName: 'L', phone: '+1 555.123.4567' }).phone).to.equal('+15551234567');
    for (const phone of ['123456', '1234567890123456', '555-CALL-NOW', '++15551234567']) {
      expect(problems({ firstName: 'F', lastName: 'L', phone })[0], phone).to.match(/^phone: must have 7 to 15 digits/);
    }
  });

  it('limits job title, department and external id to 200 characters', () => {
    expect(problems({ firstName: 'F', lastName: 'L', jobTitle: 'x'.repeat(201), department: 'y'.repeat(201), externalId: 'z'.repeat(201) })).to.deep.equal([
      'job_title: at most 200 characters',
      'department: at most 200 characters',
      'external_id: at most 200 characters',
    ]);
  });

  it('names every broken field in one error, in field order', () => {
    const error = (() => {
      try {
        parseMemberProfile({ firstName: '', lastName: 'L', email: 'nope', phone: '12' });
      } catch (e) {
        return e as ValidationError;
      }
      throw new Error('expected a ValidationError');
    })();
    expect(error.message).to.equal('first_name: required; email: not an address; phone: must have 7 to 15 digits (an optional leading +, spaces, dashes, dots and parentheses are allowed)');
  });
});
