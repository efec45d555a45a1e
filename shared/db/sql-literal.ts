// A string as a PostgreSQL string literal, for statements sent with their values inlined (a
// multi-statement query takes no parameters). Exactly pg.escapeLiteral's output, built with two
// regular-expression replaces rather than one concatenation per character: on a projection
// batch's rows as JSON (600 kB for 1,000 members) that measured 200 ms against 6 ms, and it left
// a million-piece string for the collector.
const QUOTE = /'/g;
const BACKSLASH = /\\/g;

export function sqlLiteral(text: string): string {
  const quoted = text.replace(QUOTE, "''");
  // pg's form: E'...' (with its leading space) when there is a backslash to escape.
  return text.includes('\\') ? ` E'${quoted.replace(BACKSLASH, '\\\\')}'` : `'${quoted}'`;
}
