// A small RFC 4180 reader, fed one line at a time (readline), so a file of any size is read in
// constant memory. Fields are separated by commas; a field in double quotes may hold commas, line
// breaks and quotes doubled (`"say ""hi"""`). Lenient where RFC 4180 is strict and a spreadsheet's
// export differs: LF or CRLF line ends (readline strips both; a line break inside quotes becomes
// LF), a UTF-8 byte order mark before the first field is dropped, and a blank line between records
// is skipped. A quote inside an unquoted field is kept as a character; text after a closing quote
// (`"a"b`) and a file that ends inside quotes are errors naming the record.

export class CsvError extends Error {
  override readonly name = 'CsvError';
  constructor(
    message: string,
    /** The line the record starts on (the first line is 1). */
    readonly line: number,
  ) {
    super(`row ${line}: ${message}`);
  }
}

export interface CsvRecord {
  /**
   * The line the record starts on, 1 for the first: what an editor shows, and what a spreadsheet
   * shows unless a field above holds a line break. Reports call it the row.
   */
  readonly line: number;
  readonly fields: string[];
}

export class CsvLineReader {
  private fields: string[] = [];
  private field = '';
  /** Inside a quoted field (which a line break may interrupt). */
  private quoted = false;
  /** Right after a quoted field's closing quote: only a comma or the line's end may follow. */
  private closed = false;
  /** Nothing of the current field read yet: a quote here opens a quoted field. */
  private fieldStart = true;
  /** Lines pushed so far, and the line the current record started on. */
  private lines = 0;
  private recordLine = 1;
  private started = false;

  /**
   * Takes one line (without its line break). Returns the record it completes, or null when the
   * line is blank or ends inside quotes (the record goes on on the next line).
   */
  push(line: string): CsvRecord | null {
    if (!this.started) {
      this.started = true;
      if (line.startsWith('\uFEFF')) line = line.slice(1);
    }
    this.lines++;
    if (this.quoted) this.field += '\n';
    else if (line.length === 0) return null;
    else if (this.fields.length === 0 && this.fieldStart) this.recordLine = this.lines;
    const n = line.length;
    let i = 0;
    while (i < n) {
      if (this.quoted) {
        const quote = line.indexOf('"', i);
        if (quote === -1) {
          this.field += line.slice(i);
          break;
        }
        this.field += line.slice(i, quote);
        if (line.charCodeAt(quote + 1) === QUOTE) {
          this.field += '"';
          i = quote + 2;
        } else {
          this.quoted = false;
          this.closed = true;
          i = quote + 1;
        }
        continue;
      }
      const c = line.charCodeAt(i);
      if (c === COMMA) {
        this.fields.push(this.field);
        this.field = '';
        this.closed = false;
        this.fieldStart = true;
        i++;
        continue;
      }
      if (this.closed) this.fail('text after a closing quote (a quote inside a quoted field is written twice: "")');
      if (c === QUOTE && this.fieldStart) {
        this.quoted = true;
        this.fieldStart = false;
        i++;
        continue;
      }
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? n : comma;
      this.field += line.slice(i, end);
      this.fieldStart = false;
      i = end;
    }
    if (this.quoted) return null;
    this.fields.push(this.field);
    const fields = this.fields;
    this.startRecord();
    return { line: this.recordLine, fields };
  }

  /** Call after the last line: throws when the file ended inside a quoted field. */
  end(): void {
    if (this.quoted) this.fail('the file ends inside a quoted field (a closing " is missing)');
  }

  private startRecord(): void {
    this.fields = [];
    this.field = '';
    this.quoted = false;
    this.closed = false;
    this.fieldStart = true;
  }

  /** The broken record is dropped; reading goes on with the next line. */
  private fail(message: string): never {
    this.startRecord();
    throw new CsvError(message, this.recordLine);
  }
}

const COMMA = 44;
const QUOTE = 34;

/** Every record of a whole text (tests, small inputs). */
export function parseCsv(text: string): string[][] {
  const reader = new CsvLineReader();
  const records: string[][] = [];
  for (const line of text.split(/\r?\n/)) {
    const record = reader.push(line);
    if (record) records.push(record.fields);
  }
  reader.end();
  return records;
}
