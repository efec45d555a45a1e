// "Add to calendar" as iCalendar (RFC 5545): CRLF lines folded at 75 octets, escaped TEXT, the
// validity window in UTC, a UID that is stable per batch without naming it.
import { expect } from 'chai';
import { foldLine, icsText, icsUtc, passCalendar, passCalendarUid, type PassCalendarInput } from '../../command-service/pass-page/pass-calendar.js';

const INPUT: PassCalendarInput = {
  batchId: '0b7f9a52-2f5e-4a7b-9b7e-3a1f2c9d8e01',
  firstName: 'Grace',
  facilityName: 'Main entrance',
  timeZone: 'UTC',
  arrivalDate: '2026-12-01',
  arrivalTime: '09:30',
  validFrom: new Date('2026-12-01T09:30:00.000Z'),
  validUntil: new Date('2026-12-02T06:30:15.250Z'),
  invitedBy: 'Ada Admin',
  now: new Date('2026-11-20T08:00:00Z'),
};

/** Unfolds (§3.1) and splits into content lines. */
function contentLines(ics: string): string[] {
  return ics.replace(/\r\n[ \t]/g, '').split('\r\n').slice(0, -1);
}

function property(ics: string, name: string): string {
  const line = contentLines(ics).find((l) => l.startsWith(`${name}:`));
  if (line === undefined) throw new Error(`no ${name}`);
  return line.slice(name.length + 1);
}

describe('pass calendar (ICS)', () => {
  const ics = passCalendar(INPUT);

  it('is one VCALENDAR with one VEVENT, every line ending in CRLF', () => {
    expect(ics.endsWith('\r\n')).to.equal(true);
    expect(ics.replace(/\r\n/g, '')).to.not.match(/[\r\n]/);
    const lines = contentLines(ics);
    expect(lines[0]).to.equal('BEGIN:VCALENDAR');
    expect(lines.at(-1)).to.equal('END:VCALENDAR');
    expect(lines).to.include.members(['VERSION:2.0', 'BEGIN:VEVENT', 'END:VEVENT']);
    expect(lines.filter((l) => l === 'BEGIN:VEVENT')).to.have.length(1);
    expect(property(ics, 'PRODID')).to.match(/^-\/\/.+\/\/EN$/);
  });

  it('spans the validity window in UTC, stamped with the time it was made', () => {
    expect(property(ics, 'DTSTART')).to.equal('20261201T093000Z');
    expect(property(ics, 'DTEND')).to.equal('20261202T063015Z');
    expect(property(ics, 'DTSTAMP')).to.equal('20261120T080000Z');
    expect(icsUtc(new Date('2027-01-02T03:04:05.678Z'))).to.equal('20270102T030405Z');
  });

  it("keeps UTC instants in DTSTART/DTEND and says the facility's local times and zone in the description", () => {
    // A Europe/Berlin facility (CET, +01:00): arrival 09:30 local, the window to local midnight.
    const berlin = passCalendar({ ...INPUT, timeZone: 'Europe/Berlin', validFrom: new Date('2026-12-01T08:30:00.000Z'), validUntil: new Date('2026-12-01T22:59:59.999Z') });
    expect(property(berlin, 'DTSTART')).to.equal('20261201T083000Z');
    expect(property(berlin, 'DTEND')).to.equal('20261201T225959Z');
    const description = property(berlin, 'DESCRIPTION');
    expect(description).to.include('Arrival: 2026-12-01 09:30 Europe/Berlin.');
    expect(description).to.include('Valid from 2026-12-01 09:30 until 2026-12-01 23:59 Europe/Berlin.');
    expect(description).to.not.include('UTC');
  });

  it('names the facility in SUMMARY and LOCATION, with a UID from the batch that does not reveal it', () => {
    expect(property(ics, 'SUMMARY')).to.equal('Guest visit: Main entrance');
    expect(property(ics, 'LOCATION')).to.equal('Main entrance');
    expect(property(ics, 'UID')).to.equal(passCalendarUid(INPUT.batchId));
    expect(passCalendarUid(INPUT.batchId)).to.equal(passCalendarUid(INPUT.batchId));
    expect(passCalendarUid(INPUT.batchId)).to.not.include(INPUT.batchId).and.not.equal(passCalendarUid('another'));
    expect(property(ics, 'DESCRIPTION')).to.include('Guest pass for Grace at Main entrance.').and.include('Invited by Ada Admin.');
  });

  it('escapes TEXT: backslash, semicolon, comma and line breaks; drops other controls', () => {
    expect(icsText('a\\b;c,d\ne\r\nf\u0007g')).to.equal('a\\\\b\\;c\\,d\\ne\\nfg');
    const evil = passCalendar({ ...INPUT, facilityName: 'Hall; B, 2nd floor\r\nEND:VEVENT', firstName: 'X\nBEGIN:VALARM', invitedBy: null });
    expect(property(evil, 'SUMMARY')).to.equal('Guest visit: Hall\\; B\\, 2nd floor\\nEND:VEVENT');
    expect(property(evil, 'LOCATION')).to.equal('Hall\\; B\\, 2nd floor\\nEND:VEVENT');
    expect(contentLines(evil).filter((l) => l === 'END:VEVENT')).to.have.length(1);
    expect(contentLines(evil).some((l) => l.startsWith('BEGIN:VALARM'))).to.equal(false);
    expect(property(evil, 'DESCRIPTION')).to.not.include('Invited by');
  });

  it('folds Unicode line breaks (NEL, LS, PS) like CR and LF, and drops C1 controls', () => {
    expect(icsText('a\u0085b\u2028c\u2029d\u0090e')).to.equal('a\\nb\\nc\\nde');
    const evil = passCalendar({ ...INPUT, facilityName: 'Hall\u2028END:VEVENT', firstName: 'X\u0085BEGIN:VALARM', invitedBy: 'Y\u2029ATTACH:http://evil.example' });
    const text = evil.toString();
    expect(text).not.to.match(/[\u0085\u2028\u2029]/);
    expect(contentLines(evil).filter((l) => l === 'END:VEVENT')).to.have.length(1);
    expect(contentLines(evil).some((l) => l.startsWith('BEGIN:VALARM') || l.startsWith('ATTACH'))).to.equal(false);
  });

  it('folds long lines at 75 octets without splitting a UTF-8 character', () => {
    const long = passCalendar({ ...INPUT, facilityName: 'Zürich Süd – Empfangsgebäude '.repeat(8).trim() });
    for (const line of long.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).to.be.at.most(75);
    expect(property(long, 'LOCATION')).to.equal('Zürich Süd – Empfangsgebäude '.repeat(8).trim());
    const folded = foldLine('X'.repeat(200));
    expect(folded.split('\r\n').map((l) => l.length)).to.deep.equal([75, 75, 52]);
    expect(foldLine('é'.repeat(40)).split('\r\n')[0]).to.equal('é'.repeat(37));
  });
});
