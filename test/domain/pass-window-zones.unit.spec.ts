import { expect } from 'chai';
import { parseCreatePassRequest, resolvePassWindow } from '../../shared/domain/pass-request.js';
import { ValidationError } from '../../shared/errors.js';

// The window of a new pass is read in the facility's IANA zone (pass-request.ts, resolvePassWindow).
const now = new Date('2026-01-01T00:00:00.000Z');
const base = { first_name: 'Ada', email: 'ada@example.com', facility_id: 10 };
const windowOf = (zone: string, body: Record<string, unknown>, at = now) => {
  const input = resolvePassWindow(parseCreatePassRequest({ ...base, ...body }), zone, at);
  return { from: input.validFrom, until: input.validUntil };
};

describe('pass window in the facility time zone', () => {
  it('parsing alone needs no zone and keeps the local fields as given', () => {
    const request = parseCreatePassRequest({ ...base, arrival_date: '2026-03-12T09:30', access_until: '2026-03-13' });
    expect(request).to.include({ arrivalDate: '2026-03-12', arrivalTime: '09:30', accessUntil: '2026-03-13' });
    expect(request).to.not.have.property('validFrom');
  });

  it('a Europe/Berlin facility: the arrival day is local midnight to local midnight (CET, +01:00)', () => {
    expect(windowOf('Europe/Berlin', { arrival_date: '2026-03-12' })).to.deep.equal({
      from: '2026-03-11T23:00:00.000Z',
      until: '2026-03-12T22:59:59.999Z',
    });
  });

  it('a Europe/Berlin facility in summer time (CEST, +02:00), with an arrival_time', () => {
    expect(windowOf('Europe/Berlin', { arrival_date: '2026-07-01', arrival_time: '09:30' })).to.deep.equal({
      from: '2026-07-01T07:30:00.000Z',
      until: '2026-07-01T21:59:59.999Z',
    });
  });

  it('an America/New_York facility (EST, -05:00): arrival_time and a date-only access_until', () => {
    expect(windowOf('America/New_York', { arrival_date: '2026-02-10', arrival_time: '18:00', access_until: '2026-02-11' })).to.deep.equal({
      from: '2026-02-10T23:00:00.000Z',
      until: '2026-02-12T04:59:59.999Z',
    });
  });

  it('the day clocks go forward is 23 hours long (Berlin, 2026-03-29)', () => {
    const { from, until } = windowOf('Europe/Berlin', { arrival_date: '2026-03-29' });
    expect(from).to.equal('2026-03-28T23:00:00.000Z');
    expect(until).to.equal('2026-03-29T21:59:59.999Z');
    expect(Date.parse(until) + 1 - Date.parse(from)).to.equal(23 * 3600_000);
  });

  it('the day clocks go back is 25 hours long (New York, 2026-11-01), and a later arrival_time reads the new offset', () => {
    const day = windowOf('America/New_York', { arrival_date: '2026-11-01' });
    expect(day).to.deep.equal({ from: '2026-11-01T04:00:00.000Z', until: '2026-11-02T04:59:59.999Z' });
    expect(windowOf('America/New_York', { arrival_date: '2026-11-01T09:00' }).from).to.equal('2026-11-01T14:00:00.000Z');
  });

  it('a zone-less access_until date-time is local; one with an offset or Z keeps its meaning', () => {
    const body = { arrival_date: '2026-03-12', arrival_time: '08:00' };
    expect(windowOf('Europe/Berlin', { ...body, access_until: '2026-03-12T18:00:30' }).until).to.equal('2026-03-12T17:00:30.000Z');
    expect(windowOf('Europe/Berlin', { ...body, access_until: '2026-03-12T18:00+05:00' }).until).to.equal('2026-03-12T13:00:00.000Z');
    expect(windowOf('America/New_York', { ...body, access_until: '2026-03-12T18:00Z' }).until).to.equal('2026-03-12T18:00:00.000Z');
  });

  it('UTC gives the same window as before zones (arrival_time, date-only and offset access_until)', () => {
    expect(windowOf('UTC', { arrival_date: '2026-03-02', arrival_time: '09:30', access_until: '2026-03-03' })).to.deep.equal({
      from: '2026-03-02T09:30:00.000Z',
      until: '2026-03-03T23:59:59.999Z',
    });
    expect(windowOf('UTC', { arrival_date: '2026-03-02', access_until: '2026-03-02T18:00:00+02:00' }).until).to.equal('2026-03-02T16:00:00.000Z');
  });

  it('the window rules speak of local times: an offset access_until before the local arrival is refused', () => {
    // 10:00+01:00 is 09:00 UTC, the same instant as Berlin 10:00; New York's 08:00 arrival is 13:00 UTC.
    expect(() => windowOf('America/New_York', { arrival_date: '2026-03-02', arrival_time: '08:00', access_until: '2026-03-02T10:00+01:00' }))
      .to.throw(ValidationError, 'access_until must be after the arrival time');
    expect(windowOf('Europe/Berlin', { arrival_date: '2026-03-02', arrival_time: '08:00', access_until: '2026-03-02T10:00+01:00' }).until).to.equal('2026-03-02T09:00:00.000Z');
  });

  it('whether a pass has already expired depends on the zone: late evening in New York is the next day in UTC', () => {
    const at = new Date('2026-03-03T02:00:00.000Z'); // 21:00 on 2 March in New York
    expect(windowOf('America/New_York', { arrival_date: '2026-03-02' }, at).until).to.equal('2026-03-03T04:59:59.999Z');
    expect(() => windowOf('UTC', { arrival_date: '2026-03-02' }, at)).to.throw(ValidationError, 'the pass would already have expired');
  });
});
