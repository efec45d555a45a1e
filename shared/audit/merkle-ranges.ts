// The shape of an RFC 9162 Merkle tree over leaves [0, n), as ranges of leaves, with no hashing:
// which complete subtrees make up a range, and which ranges an inclusion proof (2.1.3.1) or a
// consistency proof (2.1.4.1) is made of. The store keeps only complete subtrees (a `TreeNode`:
// 2^level leaves starting at index * 2^level), so every range the algorithms meet is a short
// list of them (one per bit of its size), and a proof is O(log n) stored hashes.

/** The complete subtree of leaves [index * 2^level, (index + 1) * 2^level). */
export interface TreeNode {
  readonly level: number;
  readonly index: number;
}

/** Leaves [start, end). */
export interface LeafRange {
  readonly start: number;
  readonly end: number;
}

/** The largest power of two strictly less than n (n >= 2): RFC 9162's k. */
export function splitPoint(n: number): number {
  if (n < 2) throw new Error('a tree of fewer than 2 leaves has no split');
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export function nodeKey(node: TreeNode): string {
  return `${node.level}:${node.index}`;
}

/**
 * The complete subtrees whose hashes make up MTH(D[start:end]) of a range the RFC's recursion
 * produces (start a multiple of the largest power of two not above its size), left to right,
 * largest first: MTH of the range is their hashes folded from the right.
 */
export function rangeNodes(range: LeafRange): TreeNode[] {
  const nodes: TreeNode[] = [];
  let start = range.start;
  let size = range.end - range.start;
  if (size <= 0) throw new Error(`empty leaf range [${range.start}, ${range.end})`);
  while (size > 0) {
    // The largest power of two not above size; the RFC splits at the largest strictly below, which
    // is the same subtree whenever size is not itself a power of two.
    let width = 1;
    let level = 0;
    while (width * 2 <= size) {
      width *= 2;
      level++;
    }
    if (start % width !== 0) throw new Error(`leaf range [${range.start}, ${range.end}) is not one of the tree's`);
    nodes.push({ level, index: start / width });
    start += width;
    size -= width;
  }
  return nodes;
}

/** RFC 9162 2.1.3.1 PATH(m, D[start:end]) as ranges, leaf side first. */
export function inclusionRanges(leafIndex: number, treeSize: number): LeafRange[] {
  if (!(leafIndex >= 0 && leafIndex < treeSize)) throw new Error(`leaf ${leafIndex} is not in a tree of ${treeSize}`);
  const path: LeafRange[] = [];
  let start = 0;
  let end = treeSize;
  const reversed: LeafRange[] = [];
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (leafIndex < start + k) {
      reversed.push({ start: start + k, end });
      end = start + k;
    } else {
      reversed.push({ start, end: start + k });
      start += k;
    }
  }
  // The recursion appends the sibling after the deeper path: the deepest sibling comes first.
  for (let i = reversed.length - 1; i >= 0; i--) path.push(reversed[i]!);
  return path;
}

/** RFC 9162 2.1.4.1 PROOF(m, D[n]) as ranges (0 < m < n; empty for m == n). */
export function consistencyRanges(oldSize: number, newSize: number): LeafRange[] {
  if (!(oldSize >= 1 && oldSize <= newSize)) throw new Error(`no consistency proof from ${oldSize} to ${newSize}`);
  if (oldSize === newSize) return [];
  return subproof(oldSize, 0, newSize, true);
}

/** SUBPROOF(m, D[start:end], b), m counted from start. */
function subproof(m: number, start: number, end: number, whole: boolean): LeafRange[] {
  const n = end - start;
  if (m === n) return whole ? [] : [{ start, end }];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(m, start, start + k, whole), { start: start + k, end }];
  return [...subproof(m - k, start + k, end, false), { start, end: start + k }];
}
