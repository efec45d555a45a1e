// The audit export's NDJSON lines (docs/audit.md describes them for auditors): what
// `guestpass audit export` writes and `guestpass audit verify` reads, and the pages of
// GET /api/v1/org/audit/events that `audit verify --organization` reads, one page a line.
import { canonicalText, type CanonicalEvent } from './audit-leaf.js';
import type { SignedTreeHead } from './tree-head.js';
import { entryLineText, type LeafRecordJson } from './entry-line.js';

export const EXPORT_FORMAT = 'guestpass-audit-export';
export const EXPORT_VERSION = 1;

/** First line. */
export interface ExportHeaderLine {
  readonly kind: 'header';
  readonly format: typeof EXPORT_FORMAT;
  readonly version: number;
  readonly from_size: number;
  readonly to_size: number;
  readonly exported_at: string;
}

/** When the export starts after leaf 0: the tree's right edge at from_size (its first head's size). */
export interface ExportFrontierLine {
  readonly kind: 'frontier';
  readonly tree_size: number;
  readonly nodes: ReadonlyArray<{ readonly level: number; readonly index: number; readonly hash: string }>;
}

/**
 * One place in the log: the notary's leaf and the event the log holds there (merged by
 * position). Either is null when the other has nothing at that position.
 */
export interface ExportEntryLine {
  readonly kind: 'entry';
  readonly leaf: LeafRecordJson | null;
  readonly event: CanonicalEvent | null;
}

/**
 * One line of text. An entry is written `{"kind":"entry","leaf":<leaf record>,"event":<JCS of the
 * event>}` (entry-line.ts): the event's bytes are exactly the leaf's, so a verifier hashes them as
 * they stand instead of parsing and re-serializing every event.
 */
export function exportLineText(line: ExportLine): string {
  if (line.kind !== 'entry') return JSON.stringify(line);
  return entryLineText(JSON.stringify(line.leaf), line.event === null ? 'null' : canonicalText(line.event));
}

/** A signed head, right after the entry that makes its tree_size leaves. */
export interface ExportHeadLine extends SignedTreeHead {
  readonly kind: 'head';
}

/** Last line: an export cut short has none. */
export interface ExportEndLine {
  readonly kind: 'end';
  readonly entries: number;
}

export type ExportLine = ExportHeaderLine | ExportFrontierLine | ExportEntryLine | ExportHeadLine | ExportEndLine;

/** An item of a tenant's page: its event (or why it is withheld) with its inclusion proof against the page's head. */
export interface OrgAuditItem {
  readonly leaf_index: number;
  readonly leaf_hash: string;
  readonly event: CanonicalEvent | null;
  readonly withheld: string | null;
  readonly inclusion_proof: readonly string[];
}

/** A page of GET /api/v1/org/audit/events. */
export interface OrgAuditPage {
  readonly success: true;
  readonly organization: number;
  readonly head: SignedTreeHead | null;
  /** From the head the previous page was proved against to this page's head; null when the same or on the first page. */
  readonly consistency: { readonly from_head: number; readonly from_size: number; readonly to_head: number; readonly to_size: number; readonly proof: readonly string[] } | null;
  readonly items: readonly OrgAuditItem[];
  readonly next_cursor: string | null;
  readonly has_more: boolean;
}
