// A multipart/form-data body (RFC 7578) split into its parts: what a browser sends for a form
// with a file input, which works without a script. The body is read whole, up to a limit, by the
// caller; no part is decoded beyond its name, its file name and its bytes.
import { ValidationError } from '../../shared/errors.js';

export interface FormPart {
  readonly name: string;
  /** Set for a file input's part. */
  readonly filename: string | null;
  readonly data: Buffer;
}

/** The boundary of a multipart/form-data Content-Type, or null when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (contentType === undefined || !/^multipart\/form-data\s*;/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match === null ? null : (match[1] ?? match[2] ?? null);
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const malformed = () => new ValidationError('the uploaded form could not be read');
  let at = body.indexOf(delimiter);
  if (at === -1) throw malformed();
  const parts: FormPart[] = [];
  for (;;) {
    at += delimiter.length;
    // `--` after a delimiter ends the body.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts;
    if (!body.subarray(at, at + 2).equals(CRLF)) throw malformed();
    const headersEnd = body.indexOf(HEADER_END, at + 2);
    if (headersEnd === -1) throw malformed();
    const headers = body.subarray(at + 2, headersEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([CRLF, delimiter]), headersEnd + 4);
    if (next === -1) throw malformed();
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers);
    if (disposition === null) throw malformed();
    const name = /\bname="([^"]*)"/i.exec(disposition[1]!)?.[1];
    if (name === undefined) throw malformed();
    const filename = /\bfilename="([^"]*)"/i.exec(disposition[1]!)?.[1] ?? null;
    parts.push({ name, filename, data: body.subarray(headersEnd + 4, next) });
    at = next + CRLF.length;
  }
}

/** The lines of a file's bytes (UTF-8, a leading byte order mark dropped), without their line ends. */
export async function* linesOf(data: Buffer): AsyncGenerator<string> {
  let start = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
  while (start < data.length) {
    let end = data.indexOf(0x0a, start);
    if (end === -1) end = data.length;
    const lineEnd = end > start && data[end - 1] === 0x0d ? end - 1 : end;
    yield data.toString('utf8', start, lineEnd);
    start = end + 1;
  }
}
