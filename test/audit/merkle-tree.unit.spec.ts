// The tree math against a naive, literal transcription of RFC 9162 2.1.1 (MTH), 2.1.3.1 (PATH) and
// 2.1.4.1 (PROOF) for every size up to 70 and some large ones, through a node store that holds
// only complete subtrees, as the notary's table does.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { EMPTY_ROOT, leafHash, leafHashOfText, nodeHash } from '../../shared/audit/merkle-hash.js';
import { nodeKey, rangeNodes, splitPoint, type TreeNode } from '../../shared/audit/merkle-ranges.js';
import { consistencyProof, inclusionProof, rootHash, type NodeStore } from '../../shared/audit/merkle-proofs.js';
import { verifyConsistency, verifyInclusion } from '../../shared/audit/merkle-verify.js';
import { CompactRange, frontierNodes } from '../../shared/audit/compact-range.js';

const leaves = (n: number) => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));

function mth(d: readonly Buffer[]): Buffer {
  if (d.length === 0) return createHash('sha256').digest();
  if (d.length === 1) return d[0]!;
  const k = splitPoint(d.length);
  return nodeHash(mth(d.slice(0, k)), mth(d.slice(k)));
}

function path(m: number, d: readonly Buffer[]): Buffer[] {
  if (d.length === 1) return [];
  const k = splitPoint(d.length);
  return m < k ? [...path(m, d.slice(0, k)), mth(d.slice(k))] : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}

function subproof(m: number, d: readonly Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const k = splitPoint(d.length);
  return m <= k ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))] : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}

/** Every complete subtree of the leaves, as the notary stores them, from appends. */
function storeOf(d: readonly Buffer[]): NodeStore & { asked: number } {
  const map = new Map<string, Buffer>();
  const range = new CompactRange();
  for (const leaf of d) for (const node of range.append(leaf)) map.set(nodeKey(node), node.hash);
  const store = {
    asked: 0,
    async nodes(wanted: readonly TreeNode[]) {
      store.asked++;
      return new Map(wanted.map((n) => [nodeKey(n), map.get(nodeKey(n))!]));
    },
  };
  return store;
}

const SIZES = [...Array.from({ length: 70 }, (_, i) => i + 1), 127, 128, 129, 255, 1000, 1025];

describe('audit Merkle tree (RFC 9162)', () => {
  it('hashes leaves and nodes with the 0x00 / 0x01 prefixes and the empty root as SHA-256 of nothing', () => {
    expect(leafHash(Buffer.from('a')).toString('hex')).to.equal(createHash('sha256').update(Buffer.from([0])).update('a').digest('hex'));
    // From a text: its UTF-8 bytes, multi-byte characters and a text longer than the scratch buffer included.
    for (const text of ['a', 'é€😀 "x"', 'ü'.repeat(5000)]) expect(leafHashOfText(text).equals(leafHash(Buffer.from(text, 'utf8'))), text.slice(0, 8)).to.equal(true);
    expect(nodeHash(Buffer.from('l'), Buffer.from('r')).toString('hex')).to.equal(createHash('sha256').update(Buffer.from([1])).update('lr').digest('hex'));
    expect(EMPTY_ROOT.toString('hex')).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('gives the naive MTH for every size, from the compact range and from the stored nodes', async () => {
    const all = leaves(1025);
    const range = new CompactRange();
    const pushed = new CompactRange(); // push(): the verifier's append that lists no nodes
    for (const n of SIZES) {
      while (range.size < n) range.append(all[range.size]!);
      while (pushed.size < n) pushed.push(all[pushed.size]!);
      const d = all.slice(0, n);
      expect(range.root().equals(mth(d)), `size ${n}`).to.equal(true);
      expect(pushed.root().equals(mth(d)), `pushed, size ${n}`).to.equal(true);
      expect(pushed.nodes(), `pushed edge, size ${n}`).to.deep.equal(range.nodes());
      expect((await rootHash(storeOf(d), n)).equals(mth(d)), `stored, size ${n}`).to.equal(true);
    }
  });

  it('restarts a compact range from its stored edge and goes on as if it never stopped', () => {
    const all = leaves(300);
    const store = new Map<string, Buffer>();
    const first = new CompactRange();
    for (const leaf of all.slice(0, 173)) for (const node of first.append(leaf)) store.set(nodeKey(node), node.hash);
    const edge = frontierNodes(173).map((n) => ({ ...n, hash: store.get(nodeKey(n))! }));
    const resumed = new CompactRange(173, edge);
    for (const leaf of all.slice(173)) resumed.append(leaf);
    expect(resumed.root().equals(mth(all))).to.equal(true);
    expect(() => new CompactRange(173, edge.slice(1))).to.throw(/does not make up/);
  });

  it('makes the naive inclusion proof of every leaf, in one store read, and verifies it', async () => {
    for (const n of SIZES.filter((s) => s <= 129 || s === 1025)) {
      const d = leaves(n);
      const store = storeOf(d);
      const root = mth(d);
      for (let m = 0; m < n; m += n > 200 ? 97 : n > 70 ? 7 : 1) {
        store.asked = 0;
        const proof = await inclusionProof(store, m, n);
        expect(store.asked).to.equal(1);
        expect(proof.map((p) => p.toString('hex')), `PATH(${m}, D[${n}])`).to.deep.equal(path(m, d).map((p) => p.toString('hex')));
        expect(verifyInclusion(m, n, d[m]!, proof, root), `verify ${m} in ${n}`).to.equal(true);
      }
    }
  });

  it('refuses an inclusion proof of another leaf, index or root, or with a changed node', async () => {
    const d = leaves(21);
    const root = mth(d);
    const proof = await inclusionProof(storeOf(d), 5, 21);
    expect(verifyInclusion(5, 21, d[6]!, proof, root)).to.equal(false);
    expect(verifyInclusion(6, 21, d[5]!, proof, root)).to.equal(false);
    expect(verifyInclusion(5, 21, d[5]!, proof, mth(d.slice(0, 20)))).to.equal(false);
    expect(verifyInclusion(5, 21, d[5]!, [...proof.slice(0, 2), leafHash(Buffer.from('x')), ...proof.slice(3)], root)).to.equal(false);
    expect(verifyInclusion(5, 21, d[5]!, proof.slice(1), root)).to.equal(false);
    expect(verifyInclusion(21, 21, d[5]!, proof, root)).to.equal(false);
  });

  it('makes the naive consistency proof between every pair of sizes up to 70, and verifies it', async () => {
    const all = leaves(70);
    const store = storeOf(all);
    for (let n = 1; n <= 70; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = await consistencyProof(store, m, n);
        const expected = m === n ? [] : subproof(m, all.slice(0, n), true);
        expect(proof.map((p) => p.toString('hex')), `PROOF(${m}, D[${n}])`).to.deep.equal(expected.map((p) => p.toString('hex')));
        expect(verifyConsistency(m, n, mth(all.slice(0, m)), mth(all.slice(0, n)), proof), `verify ${m} -> ${n}`).to.equal(true);
      }
    }
  });

  it('refuses a consistency proof between trees that do not extend each other', async () => {
    const all = leaves(40);
    const other = [...all.slice(0, 12), leafHash(Buffer.from('rewritten')), ...all.slice(13)];
    const proof = await consistencyProof(storeOf(all), 17, 40);
    expect(verifyConsistency(17, 40, mth(all.slice(0, 17)), mth(all), proof)).to.equal(true);
    expect(verifyConsistency(17, 40, mth(other.slice(0, 17)), mth(all), proof)).to.equal(false);
    expect(verifyConsistency(17, 40, mth(all.slice(0, 17)), mth(other), proof)).to.equal(false);
    expect(verifyConsistency(16, 40, mth(all.slice(0, 16)), mth(all), proof)).to.equal(false);
    expect(verifyConsistency(17, 40, mth(all.slice(0, 17)), mth(all), [])).to.equal(false);
    expect(verifyConsistency(40, 40, mth(all), mth(all), [])).to.equal(true);
  });

  it('splits a range into the complete subtrees the store keeps, and refuses a range that is not the tree\'s', () => {
    expect(rangeNodes({ start: 0, end: 13 })).to.deep.equal([{ level: 3, index: 0 }, { level: 2, index: 2 }, { level: 0, index: 12 }]);
    expect(rangeNodes({ start: 8, end: 16 })).to.deep.equal([{ level: 3, index: 1 }]);
    expect(() => rangeNodes({ start: 3, end: 7 })).to.throw(/not one of the tree's/);
  });
});
