// Signed tree heads: `{tree_size, root_hash, timestamp}` (RFC 9162's fields; the hash in hex, the
// time in milliseconds since the epoch), JCS-serialized as the payload of a compact JWS signed
// with the audit key (EdDSA, Ed25519). The `typ` names what it is, so no token verifier could
// ever take one for a token, and the key is in its own key set, never the OAuth one.
import canonicalize from 'canonicalize';
import { CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import type { webcrypto } from 'node:crypto';

export const TREE_HEAD_TYP = 'guestpass-tree-head+jws';
export const AUDIT_SIGNING_ALGORITHM = 'EdDSA';

export interface TreeHeadFields {
  readonly tree_size: number;
  /** Hex. */
  readonly root_hash: string;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
}

/** A head as exports and the API carry it: its sequence number in the notary's table, the fields, the JWS. */
export interface SignedTreeHead extends TreeHeadFields {
  readonly head: number;
  readonly signature: string;
}

export function headPayload(fields: TreeHeadFields): string {
  return canonicalize({ tree_size: fields.tree_size, root_hash: fields.root_hash, timestamp: fields.timestamp })!;
}

export async function signTreeHead(fields: TreeHeadFields, key: { kid: string; privateKey: webcrypto.CryptoKey }): Promise<string> {
  return new CompactSign(new TextEncoder().encode(headPayload(fields)))
    .setProtectedHeader({ alg: AUDIT_SIGNING_ALGORITHM, kid: key.kid, typ: TREE_HEAD_TYP })
    .sign(key.privateKey);
}

/** A public audit key (OKP Ed25519) from the audit key set. */
export interface AuditPublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly use: 'sig';
  readonly alg: typeof AUDIT_SIGNING_ALGORITHM;
}

/** Why a head's signature does not hold, or null when it does. */
export async function treeHeadSignatureProblem(head: SignedTreeHead, keys: readonly JWK[]): Promise<string | null> {
  const kid = kidOf(head.signature);
  const jwk = keys.find((k) => k.kid === kid);
  if (!jwk) return `signed with key ${kid ?? '(none)'}, which is not in the audit key set`;
  try {
    const key = await importJWK({ ...jwk, alg: AUDIT_SIGNING_ALGORITHM }, AUDIT_SIGNING_ALGORITHM);
    const { payload, protectedHeader } = await compactVerify(head.signature, key, { algorithms: [AUDIT_SIGNING_ALGORITHM] });
    if (protectedHeader.typ !== TREE_HEAD_TYP) return 'its signature is not a tree head';
    if (new TextDecoder().decode(payload) !== headPayload(head)) return 'its signature is over other fields';
    return null;
  } catch {
    return 'its signature does not verify';
  }
}

function kidOf(jws: string): string | null {
  try {
    const header = JSON.parse(Buffer.from(jws.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof header.kid === 'string' ? header.kid : null;
  } catch {
    return null;
  }
}
