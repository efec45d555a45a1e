// The verifier's side of RFC 9162: an inclusion proof (2.1.3.2) and a consistency proof (2.1.4.2)
// checked against root hashes, with no store. Written from the RFC's step lists.
import { nodeHash } from './merkle-hash.js';

/** 2.1.3.2: true when `proof` shows the leaf at `leafIndex` in the tree of `treeSize` whose root is `root`. */
export function verifyInclusion(leafIndex: number, treeSize: number, leaf: Buffer, proof: readonly Buffer[], root: Buffer): boolean {
  if (!(leafIndex >= 0 && leafIndex < treeSize)) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** 2.1.4.2: true when `proof` shows the tree of `oldSize` (root `oldRoot`) is a prefix of the tree of `newSize` (root `newRoot`). */
export function verifyConsistency(oldSize: number, newSize: number, oldRoot: Buffer, newRoot: Buffer, proof: readonly Buffer[]): boolean {
  if (oldSize < 1 || oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && oldRoot.equals(newRoot);
  if (proof.length === 0) return false;
  let path = [...proof];
  // Step 2: when the old tree is a complete subtree, its root is the proof's implicit first node.
  if (isPowerOfTwo(oldSize)) path = [oldRoot, ...path];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  // Step 4: drop the levels where the old tree's last leaf is a right child of a full subtree.
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(oldRoot) && sr.equals(newRoot);
}

/** Arithmetic, not bitwise: sizes pass 2^31. */
function isPowerOfTwo(n: number): boolean {
  let m = n;
  while (m > 1 && m % 2 === 0) m /= 2;
  return m === 1;
}
