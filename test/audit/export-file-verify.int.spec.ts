// `audit verify` of export files edited by hand (no database): the verifier hashes an entry's
// event bytes as the line carries them and parses only what fails, so these check that the bytes
// it hashes are all the event's, that an edit, a swap, a loss or an addition of lines is still
// named at its place, and that an export written in the earlier layout (event before leaf) and
// one with CRLF line ends verify as before. The tamper spec does the same through the database.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose';
import { canonicalText, eventLeafHash, type CanonicalEvent } from '../../shared/audit/audit-leaf.js';
import { CompactRange } from '../../shared/audit/compact-range.js';
import { toHex } from '../../shared/audit/merkle-hash.js';
import { EXPORT_FORMAT, EXPORT_VERSION, exportLineText } from '../../shared/audit/export-format.js';
import { headPayload, TREE_HEAD_TYP } from '../../shared/audit/tree-head.js';
import { verifyExportFile } from '../../cli/audit-verify.js';

const EVENTS = 40;

describe('audit verify of an export file edited by hand', function () {
  this.timeout(30_000);
  let dir: string;
  let keys: JWK[];
  let lines: string[];
  let events: CanonicalEvent[];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'audit-export-file-'));
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    keys = [{ ...(await exportJWK(publicKey)), kid: 'test', alg: 'EdDSA', use: 'sig' }];
    // An event holding the separators the line uses, and a brace, inside its strings.
    events = Array.from({ length: EVENTS }, (_, i) => ({
      position: `${100 + i}/${i + 1}`,
      stream: `s-${i}`,
      revision: 0,
      id: randomUUID(),
      type: 'Noted',
      data: { n: i, text: i === 7 ? '},"event":{"leaf":null}' : `note ${i}`, nested: { id: `inner-${i}` } },
      metadata: { actor: { id: 'a' } },
      recorded_at: new Date(1_700_000_000_000 + i).toISOString(),
    }));
    lines = [JSON.stringify({ kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, from_size: 0, to_size: EVENTS, exported_at: new Date().toISOString() })];
    const range = new CompactRange();
    let head = 0;
    for (const [i, event] of events.entries()) {
      const hash = eventLeafHash(event);
      range.append(hash);
      lines.push(exportLineText({ kind: 'entry', leaf: { index: i, event_id: event.id, position: event.position, leaf_hash: toHex(hash) }, event }));
      if ((i + 1) % 10 === 0) {
        const fields = { tree_size: i + 1, root_hash: toHex(range.root()), timestamp: 1_700_000_000_000 + i };
        const signature = await new CompactSign(new TextEncoder().encode(headPayload(fields))).setProtectedHeader({ alg: 'EdDSA', kid: 'test', typ: TREE_HEAD_TYP }).sign(privateKey);
        lines.push(JSON.stringify({ kind: 'head', head: ++head, ...fields, signature }));
      }
    }
    lines.push(JSON.stringify({ kind: 'end', entries: EVENTS }));
  });

  after(() => rm(dir, { recursive: true, force: true }));

  const entryLine = (i: number) => lines.findIndex((l) => l.includes(`"index":${i},`));

  async function verify(text: string) {
    const file = path.join(dir, `${randomUUID()}.ndjson`);
    await writeFile(file, text);
    return verifyExportFile(file, { keys, trustedHead: null, organization: false, progress: false });
  }

  it('verifies the export as written, with CRLF line ends, and without a last newline', async () => {
    expect((await verify(lines.join('\n') + '\n')).ok).to.equal(true);
    expect((await verify(lines.join('\r\n') + '\r\n')).ok).to.equal(true);
    const result = await verify(lines.join('\n'));
    expect(result).to.include({ ok: true, events: EVENTS, firstHead: 1, lastHead: 4 });
  });

  it('verifies an export in the earlier layout (the event before the leaf record) by parsing its entries', async () => {
    const earlier = lines.map((l) => {
      if (!l.startsWith('{"kind":"entry"')) return l;
      const { leaf, event } = JSON.parse(l) as { leaf: unknown; event: CanonicalEvent };
      return `{"kind":"entry","event":${canonicalText(event)},"leaf":${JSON.stringify(leaf)}}`;
    });
    expect((await verify(earlier.join('\n') + '\n')).ok).to.equal(true);
  });

  it('names a byte changed in an event, even in the one holding the separators', async () => {
    for (const i of [3, 7]) {
      const edited = [...lines];
      edited[entryLine(i)] = edited[entryLine(i)]!.replace(`"n":${i},`, `"n":${i + 100},`);
      const result = await verify(edited.join('\n') + '\n');
      expect(result.failure, `event ${i}`).to.include({ kind: 'changed', position: events[i]!.position, eventId: events[i]!.id, leafIndex: i });
    }
  });

  it('names two entry lines swapped, a line removed and a line added', async () => {
    const swapped = [...lines];
    [swapped[entryLine(4)], swapped[entryLine(5)]] = [swapped[entryLine(5)]!, swapped[entryLine(4)]!];
    expect((await verify(swapped.join('\n') + '\n')).failure).to.include({ kind: 'malformed export', leafIndex: 5 });

    const removed = lines.filter((_, at) => at !== entryLine(12));
    expect((await verify(removed.join('\n') + '\n')).failure).to.include({ kind: 'malformed export', leafIndex: 13 });

    const extra = { ...events[0]!, id: randomUUID(), position: '9999/1' };
    const added = [...lines];
    added.splice(entryLine(20), 0, exportLineText({ kind: 'entry', leaf: null, event: extra }));
    expect((await verify(added.join('\n') + '\n')).failure).to.include({ kind: 'extra', eventId: extra.id, leafIndex: 20 });
  });

  it('names an event moved into another leaf record as reordered once its own record turns up', async () => {
    // The log's events at leaves 8 and 9 swapped, the notary's records in place.
    const moved = [...lines];
    const recordOf = (i: number) => JSON.stringify({ index: i, event_id: events[i]!.id, position: events[i]!.position, leaf_hash: toHex(eventLeafHash(events[i]!)) });
    moved[entryLine(8)] = `{"kind":"entry","leaf":${recordOf(8)},"event":${canonicalText(events[9]!)}}`;
    moved[entryLine(9)] = `{"kind":"entry","leaf":${recordOf(9)},"event":${canonicalText(events[8]!)}}`;
    const result = await verify(moved.join('\n') + '\n');
    expect(result.failure).to.include({ kind: 'reordered', eventId: events[9]!.id, leafIndex: 8 });
  });
});
