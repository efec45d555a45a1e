// The right edge of a Merkle tree of n leaves: the complete subtrees that make up [0, n), one per
// set bit of n, largest first (a "compact range"). Appending a leaf merges equal neighbours, and
// every subtree completed on the way is a node the store keeps; the root is the edge folded from
// the right. O(log n) memory for any size: the notary appends with it, the verifier recomputes
// roots with it.
import { EMPTY_ROOT, nodeHash } from './merkle-hash.js';
import { rangeNodes, type TreeNode } from './merkle-ranges.js';
import { foldRange } from './merkle-proofs.js';

export interface StoredNode extends TreeNode {
  readonly hash: Buffer;
}

export class CompactRange {
  private edge: StoredNode[];
  private count: number;

  /** `edge`: the nodes of rangeNodes([0, size)), with their hashes, as frontierNodes(size) lists them. */
  constructor(size = 0, edge: readonly StoredNode[] = []) {
    const expected = size === 0 ? [] : rangeNodes({ start: 0, end: size });
    if (expected.length !== edge.length || expected.some((n, i) => n.level !== edge[i]!.level || n.index !== edge[i]!.index)) {
      throw new Error(`the edge given does not make up a tree of ${size} leaves`);
    }
    this.count = size;
    this.edge = [...edge];
  }

  get size(): number {
    return this.count;
  }

  /** Appends a leaf hash; returns the nodes it stored or completed (the leaf at level 0 first). */
  append(leaf: Buffer): StoredNode[] {
    let node: StoredNode = { level: 0, index: this.count, hash: leaf };
    const completed = [node];
    this.count++;
    while (this.edge.length > 0 && this.edge[this.edge.length - 1]!.level === node.level) {
      const left = this.edge.pop()!;
      node = { level: node.level + 1, index: left.index / 2, hash: nodeHash(left.hash, node.hash) };
      completed.push(node);
    }
    this.edge.push(node);
    return completed;
  }

  /** append() without the list of completed nodes (the verifier keeps none). */
  push(leaf: Buffer): void {
    const edge = this.edge;
    let level = 0;
    let hash = leaf;
    let index = this.count++;
    while (edge.length > 0 && edge[edge.length - 1]!.level === level) {
      hash = nodeHash(edge.pop()!.hash, hash);
      level++;
      index = Math.floor(index / 2);
    }
    edge.push({ level, index, hash });
  }

  root(): Buffer {
    return this.edge.length === 0 ? EMPTY_ROOT : foldRange(this.edge.map((n) => n.hash));
  }

  nodes(): readonly StoredNode[] {
    return this.edge;
  }
}

/** The nodes whose hashes a CompactRange of `size` leaves starts from. */
export function frontierNodes(size: number): TreeNode[] {
  return size === 0 ? [] : rangeNodes({ start: 0, end: size });
}
