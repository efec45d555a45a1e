// Text PostgreSQL cannot store: U+0000 (refused in text and jsonb alike) and unpaired UTF-16
// surrogates (no UTF-8 form). Input is checked for it where a request is read
// (shared/http/storable-text.ts); what was never checked (sealed data, opened by projections)
// is made storable instead, so a read model cannot be stopped by it.
//
// A regular expression, not String.prototype.isWellFormed: that is ES2024, the lib here ES2023.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** `text` with every such character replaced by U+FFFD, the replacement character. */
export function storableText(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE_ALL, '\ufffd');
}
