// An export's entry line as bytes: `{"kind":"entry","leaf":<leaf record>,"event":<JCS of the
// event>}`. The short leaf record comes first, so it is found without searching the event, and the
// event's bytes are exactly what its leaf hashes: `audit verify` hashes them as they stand
// (splitEntryBytes) instead of parsing and re-serializing every event.

/** The notary's record of a leaf. */
export interface LeafRecordJson {
  readonly index: number;
  readonly event_id: string;
  readonly position: string;
  readonly leaf_hash: string;
}

const ENTRY_PREFIX = '{"kind":"entry","leaf":';
const EVENT_SEPARATOR = ',"event":';

/** An entry line from its leaf record's JSON and its event's JCS text (or `null` for either). */
export function entryLineText(leafJson: string, eventText: string): string {
  return `${ENTRY_PREFIX}${leafJson}${EVENT_SEPARATOR}${eventText}}`;
}

const ENTRY_PREFIX_BYTES = Buffer.from(ENTRY_PREFIX, 'utf8');
const EVENT_SEPARATOR_BYTES = Buffer.from(EVENT_SEPARATOR, 'utf8');
const NULL_BYTES = Buffer.from('null', 'utf8');
const CLOSING_BRACE = 0x7d;

/** An entry line split without parsing its event: the event's bytes (what its leaf hashes) and the leaf record's text. */
export interface EntryBytes {
  /** The event's JCS bytes as the line carries them, or null; a view into the line. */
  readonly eventBytes: Buffer | null;
  /** The leaf record's JSON (`null` for none), parsed by parseLeafRecord when needed. */
  readonly leafText: string;
}

/**
 * An entry line as exportLineText lays it out, split without parsing its event; null for any
 * other line, and for an entry laid out otherwise (an earlier export, a record with a brace in a
 * string), which the caller parses whole instead. The leaf record is flat (a number, a UUID,
 * digits, hex), so its first closing brace ends it.
 */
export function splitEntryBytes(line: Buffer): EntryBytes | null {
  const start = ENTRY_PREFIX_BYTES.length;
  if (line.length < start + NULL_BYTES.length || ENTRY_PREFIX_BYTES.compare(line, 0, start) !== 0 || line[line.length - 1] !== CLOSING_BRACE) return null;
  let leafEnd: number;
  if (NULL_BYTES.compare(line, start, start + NULL_BYTES.length) === 0) leafEnd = start + NULL_BYTES.length;
  else {
    leafEnd = line.indexOf(CLOSING_BRACE, start) + 1;
    if (leafEnd === 0) return null;
  }
  const eventStart = leafEnd + EVENT_SEPARATOR_BYTES.length;
  if (eventStart >= line.length || EVENT_SEPARATOR_BYTES.compare(line, leafEnd, eventStart) !== 0) return null;
  const eventBytes = line.subarray(eventStart, line.length - 1);
  return { eventBytes: eventBytes.equals(NULL_BYTES) ? null : eventBytes, leafText: line.toString('utf8', start, leafEnd) };
}

/** The leaf record of an entry's text (throws on what is not JSON). */
export function parseLeafRecord(text: string): LeafRecordJson | null {
  return JSON.parse(text) as LeafRecordJson | null;
}

/**
 * Whether a leaf record's text is leaf `index`'s with hash `hex`, read without parsing it: exactly
 * how JSON.stringify writes a record (`{"index":N,…,"leaf_hash":"…"}`). Its event id and position
 * only name a failure, so a record that matches here needs no more.
 */
export function recordsLeaf(text: string, index: number, hex: string): boolean {
  return text.endsWith(`,"leaf_hash":"${hex}"}`) && text.startsWith(`{"index":${index},`);
}

