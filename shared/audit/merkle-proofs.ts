// Proofs from a store of complete subtrees (the NodeStore port; PostgreSQL's is
// postgres-tree-nodes.ts): each proof asks the store once for its O(log n) nodes.
import { EMPTY_ROOT, nodeHash } from './merkle-hash.js';
import { consistencyRanges, inclusionRanges, nodeKey, rangeNodes, type LeafRange, type TreeNode } from './merkle-ranges.js';

/** Port: the hashes of complete subtrees; every asked node must exist (the tree holds its leaves). */
export interface NodeStore {
  nodes(wanted: readonly TreeNode[]): Promise<ReadonlyMap<string, Buffer>>;
}

/** MTH of a range from its complete subtrees' hashes (folded from the right, as the RFC recursion does). */
export function foldRange(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) throw new Error('no hashes to fold');
  let hash = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) hash = nodeHash(hashes[i]!, hash);
  return hash;
}

async function rangeHashes(store: NodeStore, ranges: readonly LeafRange[]): Promise<Buffer[]> {
  const perRange = ranges.map(rangeNodes);
  const found = await store.nodes(perRange.flat());
  return perRange.map((nodes) =>
    foldRange(
      nodes.map((node) => {
        const hash = found.get(nodeKey(node));
        if (!hash) throw new Error(`the tree has no node ${nodeKey(node)}`);
        return hash;
      }),
    ),
  );
}

export async function rootHash(store: NodeStore, treeSize: number): Promise<Buffer> {
  if (treeSize === 0) return EMPTY_ROOT;
  return (await rangeHashes(store, [{ start: 0, end: treeSize }]))[0]!;
}

/** RFC 9162 2.1.3.1: the audit path of leaf `leafIndex` in the tree of `treeSize` leaves. */
export function inclusionProof(store: NodeStore, leafIndex: number, treeSize: number): Promise<Buffer[]> {
  return rangeHashes(store, inclusionRanges(leafIndex, treeSize));
}

/** Inclusion proofs of several leaves in one tree, in one store read (a page of a tenant's export). */
export async function inclusionProofs(store: NodeStore, leafIndexes: readonly number[], treeSize: number): Promise<Buffer[][]> {
  const perLeaf = leafIndexes.map((i) => inclusionRanges(i, treeSize));
  const hashes = await rangeHashes(store, perLeaf.flat());
  let at = 0;
  return perLeaf.map((ranges) => hashes.slice(at, (at += ranges.length)));
}

/** RFC 9162 2.1.4.1: the proof that the tree of `oldSize` leaves is a prefix of the tree of `newSize`. */
export function consistencyProof(store: NodeStore, oldSize: number, newSize: number): Promise<Buffer[]> {
  return rangeHashes(store, consistencyRanges(oldSize, newSize));
}
