// The offline verifier of a tenant's audit export: the pages of GET /api/v1/org/audit/events, one
// a line. Each page's head must be signed by an audit key and consistent with the previous page's
// head (RFC 9162 consistency proof); each item's event must hash to its leaf, be the tenant's own,
// come after the previous item, and be included in the page's head (inclusion proof).
import type { JWK } from 'jose';
import { eventLeafHash } from './audit-leaf.js';
import { fromHex } from './merkle-hash.js';
import { verifyConsistency, verifyInclusion } from './merkle-verify.js';
import type { OrgAuditPage } from './export-format.js';
import { treeHeadSignatureProblem, type SignedTreeHead } from './tree-head.js';
import type { FailureKind, VerificationFailure, VerificationResult } from './export-verifier.js';

export class OrgExportVerifier {
  private organization: number | null = null;
  private head: SignedTreeHead | null = null;
  private firstHead: number | null = null;
  private lastIndex = -1;
  private events = 0;
  private failure: VerificationFailure | null = null;
  private pages = 0;

  constructor(
    private readonly keys: readonly JWK[],
    private readonly trustedHead: SignedTreeHead | null = null,
  ) {}

  async page(page: OrgAuditPage): Promise<void> {
    if (this.failure) return;
    this.pages++;
    if (page?.success !== true || !Array.isArray(page.items)) return this.fail('malformed export', `line ${this.pages} is not a page of /api/v1/org/audit/events`);
    this.organization ??= page.organization;
    if (page.organization !== this.organization) return this.fail('malformed export', `page ${this.pages} is of organization ${page.organization}, not ${this.organization}`);
    if (page.head) {
      if (!(await this.acceptHead(page))) return;
    } else if (page.items.length > 0) {
      return this.fail('malformed export', `page ${this.pages} has items but no head`);
    }
    const head = this.head;
    for (const item of page.items) {
      const at = { position: item.event?.position ?? null, eventId: item.event?.id ?? null, leafIndex: item.leaf_index };
      if (!(item.leaf_index > this.lastIndex)) return this.fail('reordered', `leaf ${item.leaf_index} comes after leaf ${this.lastIndex}`, at);
      let leaf: Buffer;
      try {
        leaf = fromHex(item.leaf_hash);
        if (item.event) {
          if (!eventLeafHash(item.event).equals(leaf)) return this.fail('changed', `event ${item.event.id} does not hash to its leaf`, at);
          const orgId = (item.event.data as { orgId?: unknown } | null)?.orgId;
          if (typeof orgId === 'number' && orgId !== this.organization) return this.fail('extra', `event ${item.event.id} belongs to organization ${orgId}`, at);
        } else if (!item.withheld) {
          return this.fail('malformed export', `leaf ${item.leaf_index} has neither event nor reason to withhold it`, at);
        }
      } catch (error) {
        return this.fail('changed', `leaf ${item.leaf_index} cannot be hashed: ${(error as Error).message}`, at);
      }
      const proof = item.inclusion_proof.map((p: string) => fromHex(p));
      if (!head || !verifyInclusion(item.leaf_index, head.tree_size, leaf, proof, fromHex(head.root_hash))) {
        return this.fail('missing', `leaf ${item.leaf_index} is not in head ${head?.head ?? '(none)'} (its inclusion proof fails)`, at);
      }
      this.lastIndex = item.leaf_index;
      this.events++;
    }
  }

  async finish(): Promise<VerificationResult> {
    if (!this.failure && this.pages === 0) this.fail('malformed export', 'no pages');
    if (!this.failure && this.trustedHead && this.head && this.trustedHead.tree_size > this.head.tree_size) {
      this.fail('inconsistent head', `the trusted head ${this.trustedHead.head} is newer than this export's last head ${this.head.head}`);
    }
    return { ok: this.failure === null, events: this.events, firstHead: this.firstHead, lastHead: this.head?.head ?? null, failure: this.failure };
  }

  private async acceptHead(page: OrgAuditPage): Promise<boolean> {
    const head = page.head!;
    const problem = await treeHeadSignatureProblem(head, this.keys);
    if (problem) {
      this.fail('bad head signature', `head ${head.head} (tree size ${head.tree_size}): ${problem}`);
      return false;
    }
    const previous = this.head ?? this.trustedHead;
    if (previous && previous.head !== head.head) {
      const c = page.consistency;
      const proofOk =
        c !== null &&
        c.from_size === previous.tree_size &&
        c.to_size === head.tree_size &&
        head.tree_size >= previous.tree_size &&
        (previous.tree_size === 0 || verifyConsistency(previous.tree_size, head.tree_size, fromHex(previous.root_hash), fromHex(head.root_hash), c.proof.map((p: string) => fromHex(p))));
      if (!proofOk) {
        this.fail('inconsistent head', `head ${head.head} (tree size ${head.tree_size}) is not consistent with head ${previous.head} (tree size ${previous.tree_size})`);
        return false;
      }
    } else if (previous && previous.root_hash !== head.root_hash) {
      this.fail('inconsistent head', `head ${head.head} changed its root`);
      return false;
    }
    this.firstHead ??= head.head;
    this.head = head;
    return true;
  }

  private fail(kind: FailureKind, detail: string, at: Partial<Pick<VerificationFailure, 'position' | 'eventId' | 'leafIndex'>> = {}): void {
    this.failure ??= { kind, detail, position: at.position ?? null, eventId: at.eventId ?? null, leafIndex: at.leafIndex ?? null };
  }
}
