import { expect } from 'chai';
import { carriesLink } from '../../shared/domain/link-free-text.js';
import { parseCreatePassInput } from '../../shared/domain/pass-request.js';
import { ValidationError } from '../../shared/errors.js';

describe('names a guest reads carry no link', () => {
  it('refuses what a mail client or SMS app would make a link of', () => {
    for (const text of [
      'http://evil.example/p/phish',
      'HTTPS://evil.example',
      'hxxp://x', // any scheme:// is refused, not a list of known ones
      'mailto:someone',
      'javascript:alert(1)',
      'www.evil.example',
      'evil.com',
      'Visit evil.co now',
      'paypal.com.evil.example',
      'evil.example/p/x',
      'login.microsoftonline.xyz',
      'someone@evil.example',
      'evil\u3002com', // an ideographic full stop, which linkifiers read as a dot
      'ｅｖｉｌ．ｃｏｍ', // full-width letters and dot (NFKC)
    ]) {
      expect(carriesLink(text), text).to.equal(true);
    }
  });

  it('lets real names through', () => {
    for (const text of ['Ada', 'Lovelace', 'St.John', 'J.R.R. Tolkien', "O'Brien", 'Zoë Ünal', 'Mary-Jane', 'Dr. Smith', 'Ms. Co', 'Anne (front desk)', '李 小龍', 'Ali & Co.']) {
      expect(carriesLink(text), text).to.equal(false);
    }
  });

  it('a pass request whose first_name, last_name or invited_by carries a link is a 400 naming the field', () => {
    const now = new Date('2026-11-28T00:00:00Z');
    const base = { first_name: 'Ada', email: 'ada@example.com', arrival_date: '2026-12-01', facility_id: 1 };
    expect(parseCreatePassInput(base, now).firstName).to.equal('Ada');
    for (const [field, value] of [
      ['first_name', 'http://evil.example/p/phish'],
      ['last_name', 'www.evil.example'],
      ['invited_by', 'someone@evil.example'],
    ] as const) {
      expect(() => parseCreatePassInput({ ...base, [field]: value }, now), field)
        .to.throw(ValidationError)
        .with.property('message', `${field} must be a name, not a link or an address`);
    }
  });
});
