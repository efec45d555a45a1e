// Reads back an RFC 5322 message as nodemailer writes it: headers (unfolded, encoded words
// decoded), and the text of each leaf part (quoted-printable or base64 decoded). Enough for the
// outbox listing and for tests to look at what would be sent; not a general MIME parser
// (no nested message/rfc822, no attachments' file names).
import { TextDecoder } from 'node:util';

export interface MimeHeader {
  readonly name: string;
  /** Unfolded, encoded words decoded. */
  readonly value: string;
}

export interface MimePart {
  readonly headers: readonly MimeHeader[];
  /** The first header of this name (any case), or null. */
  header(name: string): string | null;
  /** `text/plain`, `multipart/alternative`, ... (lower case). */
  readonly contentType: string;
  /** A leaf part's content, decoded to text; '' for a multipart. */
  readonly text: string;
  readonly parts: readonly MimePart[];
}

function decoderFor(charset: string | undefined): TextDecoder {
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

function latin1Bytes(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}

function decodeQuotedPrintable(text: string): Buffer {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!;
    const hex = soft.slice(i + 1, i + 3);
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(soft.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/** RFC 2047 encoded words; adjacent words of one charset are joined before decoding (a character may span two). */
export function decodeWords(value: string): string {
  // White space between two encoded words is not part of the text.
  const joined = value.replace(/(\?=)\s+(?==\?)/g, '$1');
  let out = '';
  let last = 0;
  let charset: string | null = null;
  let bytes: Buffer[] = [];
  const flush = () => {
    if (charset !== null) out += decoderFor(charset.replace(/\*.*$/, '')).decode(Buffer.concat(bytes));
    charset = null;
    bytes = [];
  };
  for (const match of joined.matchAll(ENCODED_WORD)) {
    const [word, wordCharset, encoding, data] = match as unknown as [string, string, string, string];
    const index = match.index ?? 0;
    if (index > last) {
      flush();
      out += joined.slice(last, index);
    }
    if (charset === null || charset.toLowerCase() !== wordCharset.toLowerCase()) {
      flush();
      charset = wordCharset;
    }
    bytes.push(encoding.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : decodeQuotedPrintable(data.replace(/_/g, ' ')));
    last = index + word.length;
  }
  flush();
  return out + joined.slice(last);
}

function splitHeaderBlock(raw: string): { headerBlock: string; body: string } {
  const match = /\r?\n\r?\n/.exec(raw);
  if (!match) return { headerBlock: raw, body: '' };
  return { headerBlock: raw.slice(0, match.index), body: raw.slice(match.index + match[0].length) };
}

/** The header lines as written (unfolded, not decoded): what a header-injection test looks at. */
export function rawHeaderLines(raw: string): string[] {
  const { headerBlock } = splitHeaderBlock(raw);
  const lines: string[] = [];
  for (const line of headerBlock.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += line;
    else lines.push(line);
  }
  return lines;
}

function param(value: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Parses a message read as latin1 (one character a byte), so that each part's charset decides. */
function parsePart(raw: string): MimePart {
  const { body } = splitHeaderBlock(raw);
  const headers: MimeHeader[] = rawHeaderLines(raw)
    .map((line) => {
      const colon = line.indexOf(':');
      if (colon <= 0) return null;
      // Header bytes are UTF-8 when not encoded (SMTPUTF8); decode them before the encoded words.
      const value = decoderFor('utf-8').decode(latin1Bytes(line.slice(colon + 1).trim()));
      return { name: line.slice(0, colon).trim(), value: decodeWords(value) };
    })
    .filter((h): h is MimeHeader => h !== null);
  const header = (name: string) => headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value ?? null;
  const typeHeader = header('content-type') ?? 'text/plain; charset=us-ascii';
  const contentType = typeHeader.split(';')[0]!.trim().toLowerCase();
  const boundary = param(typeHeader, 'boundary');
  if (contentType.startsWith('multipart/') && boundary) {
    const delimiter = `--${boundary}`;
    const parts: MimePart[] = [];
    const sections = body.split(new RegExp(`(?:^|\\r?\\n)${delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    // sections[0] is the preamble; a section starting with `--` is the epilogue after the end.
    for (const section of sections.slice(1)) {
      if (section.startsWith('--')) break;
      parts.push(parsePart(section.replace(/^[ \t]*\r?\n/, '')));
    }
    return { headers, header, contentType, text: '', parts };
  }
  const encoding = (header('content-transfer-encoding') ?? '7bit').trim().toLowerCase();
  const bytes =
    encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
    : encoding === 'quoted-printable' ? decodeQuotedPrintable(body)
    : latin1Bytes(body);
  return { headers, header, contentType, text: decoderFor(param(typeHeader, 'charset')).decode(bytes), parts: [] };
}

export function parseMimeMessage(raw: Buffer | string): MimePart {
  return parsePart(typeof raw === 'string' ? Buffer.from(raw, 'utf8').toString('latin1') : raw.toString('latin1'));
}

/** The first leaf part of this content type, depth first. */
export function findPart(part: MimePart, contentType: string): MimePart | null {
  if (part.parts.length === 0) return part.contentType === contentType ? part : null;
  for (const child of part.parts) {
    const found = findPart(child, contentType);
    if (found) return found;
  }
  return null;
}
