// The audit notary's tables (projections/audit-notary.ts): the Merkle tree over the event log
// (RFC 9162) as its complete subtrees, what each leaf is, the signed tree heads, the audit signing
// keys, and a tenant's events as the notary saw them (the query service serves them from here).
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '016_audit_tree',
  async up(knex) {
    // How far the tree reaches: its size and the position of its last leaf, moved in the same
    // transaction as the leaves, so a crash never leaves a leaf twice or a gap.
    await knex.raw(`
      CREATE TABLE audit_tree_state (
        singleton        boolean       PRIMARY KEY DEFAULT true CHECK (singleton),
        tree_size        bigint        NOT NULL,
        commit_position  numeric(20,0) NOT NULL,
        prepare_position numeric(20,0) NOT NULL,
        updated_at       timestamptz   NOT NULL DEFAULT now()
      )`);
    // Every complete subtree: 2^level leaves from idx * 2^level. Level 0 are the leaf hashes.
    // About two rows a leaf; a proof reads O(log n) of them by primary key.
    await knex.raw(`
      CREATE TABLE audit_tree_nodes (
        level smallint NOT NULL,
        idx   bigint   NOT NULL,
        hash  bytea    NOT NULL,
        PRIMARY KEY (level, idx)
      )`);
    // Which event each leaf is (the sample check re-reads it from the store; exports name it).
    await knex.raw(`
      CREATE TABLE audit_leaves (
        leaf_index bigint PRIMARY KEY,
        event_id   uuid   NOT NULL,
        position   text   NOT NULL,
        org_id     integer
      )`);
    await knex.raw(`
      CREATE TABLE audit_tree_heads (
        head        integer     PRIMARY KEY,
        tree_size   bigint      NOT NULL,
        root_hash   bytea       NOT NULL,
        signed_at   bigint      NOT NULL,
        kid         text        NOT NULL,
        signature   text        NOT NULL,
        logged      boolean     NOT NULL DEFAULT false,
        CONSTRAINT audit_tree_heads_size_key UNIQUE (tree_size, head)
      )`);
    // A tenant's own events, as canonical text (null when withheld, with the reason).
    await knex.raw(`
      CREATE TABLE audit_org_events (
        org_id     integer NOT NULL,
        leaf_index bigint  NOT NULL,
        canonical  text,
        withheld   text,
        PRIMARY KEY (org_id, leaf_index)
      )`);
    // What ties an event that does not name its organization to one (shared/audit/org-attribution.ts).
    await knex.raw(`
      CREATE TABLE audit_org_links (
        key    text    PRIMARY KEY,
        org_id integer NOT NULL
      )`);
    // The keys that sign tree heads (Ed25519): sealed under the OAuth KEK like the OAuth keys, one
    // current. A rotated key stays published for good (old heads must still verify); its private
    // half is destroyed at rotation.
    await knex.raw(`
      CREATE TABLE audit_signing_keys (
        kid                    text        PRIMARY KEY,
        public_jwk             jsonb       NOT NULL,
        kek_id                 text,
        private_key_iv         bytea,
        private_key_ciphertext bytea,
        private_key_tag        bytea,
        created_at             timestamptz NOT NULL,
        rotated_at             timestamptz,
        CONSTRAINT audit_signing_keys_private_check CHECK ((rotated_at IS NULL) = (private_key_ciphertext IS NOT NULL))
      )`);
    await knex.raw('CREATE UNIQUE INDEX audit_signing_keys_one_current ON audit_signing_keys ((true)) WHERE rotated_at IS NULL');
  },
  async down(knex) {
    for (const table of ['audit_signing_keys', 'audit_org_links', 'audit_org_events', 'audit_tree_heads', 'audit_leaves', 'audit_tree_nodes', 'audit_tree_state']) {
      await knex.raw(`DROP TABLE IF EXISTS ${table}`);
    }
  },
};
