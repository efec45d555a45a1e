import { expect } from 'chai';
import { isStorableText, storableText } from '../../shared/db/storable-text.js';

describe('storable text (what PostgreSQL text and jsonb can hold)', () => {
  it('refuses NUL and unpaired surrogates, and nothing else', () => {
    for (const text of ['', 'plain', 'Zoë 名前', '🚪 paired \ud83d\udeaa', 'tab\tnewline\n', '\\u0000 as six characters']) {
      expect(isStorableText(text), JSON.stringify(text)).to.equal(true);
    }
    for (const text of ['\u0000', 'a\u0000b', '\ud800', 'x\ud800y', '\udc00', 'low first \udc00\ud800', 'end \ud83d']) {
      expect(isStorableText(text), JSON.stringify(text)).to.equal(false);
    }
  });

  it('replaces each such character by U+FFFD and leaves pairs and other text as they are', () => {
    expect(storableText('a\u0000b\u0000')).to.equal('a\ufffdb\ufffd');
    expect(storableText('x\ud800y\udc00z')).to.equal('x\ufffdy\ufffdz');
    expect(storableText('\udc00\ud800')).to.equal('\ufffd\ufffd');
    expect(storableText('keep 🚪 \ud83d')).to.equal('keep 🚪 \ufffd');
    const fine = 'Zoë 🚪';
    expect(storableText(fine)).to.equal(fine);
  });
});
