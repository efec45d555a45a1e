import { expect } from 'chai';
import { PageCursor } from '../../shared/http/page-cursor.js';
import { ValidationError } from '../../shared/errors.js';

describe('page cursor', () => {
  const cursors = new PageCursor('a'.repeat(32));
  const binding = { list: 'org-passes:1', search: null };
  const position = { createdAt: '2026-01-02T03:04:05.123456Z', id: 42 };

  it('round-trips a position for the same binding', () => {
    const cursor = cursors.encode(position, binding);
    expect(cursor).to.match(/^v1\./);
    expect(cursors.decode(cursor, binding)).to.deep.equal(position);
  });

  it('is opaque: the timestamp is not readable as text in it', () => {
    expect(cursors.encode(position, binding)).not.to.include('2026-01-02');
  });

  it('refuses a cursor bound to another organization or another search', () => {
    const cursor = cursors.encode(position, binding);
    expect(() => cursors.decode(cursor, { list: 'org-passes:2', search: null })).to.throw(ValidationError);
    expect(() => cursors.decode(cursor, { list: 'org-passes:1', search: 'ann' })).to.throw(ValidationError);
  });

  it('refuses a cursor signed with another secret (another deployment, or a restart without PAGE_CURSOR_SECRET)', () => {
    const other = new PageCursor('b'.repeat(32));
    expect(() => other.decode(cursors.encode(position, binding), binding)).to.throw(ValidationError);
  });

  it('refuses any altered character, garbage and oversized input', () => {
    const cursor = cursors.encode(position, binding);
    for (let i = 0; i < cursor.length; i++) {
      const c = cursor[i] === 'A' ? 'B' : 'A';
      const altered = cursor.slice(0, i) + c + cursor.slice(i + 1);
      if (altered === cursor) continue;
      expect(() => cursors.decode(altered, binding), `position ${i}`).to.throw(ValidationError);
    }
    for (const bad of ['', 'v1', 'v1..', 'abc', `v1.${'A'.repeat(600)}.x`, 'v2.e30.' + 'A'.repeat(43)]) {
      expect(() => cursors.decode(bad, binding), bad).to.throw(ValidationError);
    }
  });

  it('wants a secret of at least 32 bytes', () => {
    expect(() => new PageCursor('short')).to.throw(/32 bytes/);
    expect(() => new PageCursor(null)).not.to.throw();
  });
});
