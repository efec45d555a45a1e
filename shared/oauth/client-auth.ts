// Client authentication at the token, introspection and revocation endpoints (RFC 6749 §2.3).
//
//   client_secret_basic  Authorization: Basic base64(urlencode(id) ":" urlencode(secret))  (§2.3.1:
//                        id and secret are form-urlencoded before Basic encoding)
//   client_secret_post   client_id and client_secret in the form body
//   none                 public clients: client_id in the body (or Basic with an empty password,
//                        which some libraries send); PKCE is their proof
//
// Rules, each failing with the RFC's code:
//   * more than one method in a request (Basic and client_secret in the body): invalid_request
//     (§2.3 "MUST NOT use more than one authentication method");
//   * client_id in the body that differs from Basic's: invalid_request;
//   * a repeated parameter: invalid_request;
//   * no client identified, unknown or deleted client, malformed Basic credentials, wrong secret,
//     a confidential client without a secret, a public client presenting a secret (it has none, so
//     whatever it sends cannot be right), or a public client where only confidential ones may
//     come (introspection): invalid_client, 401, with a Basic challenge when Basic was tried.
// The secret is compared as SHA-256 digests in constant time; an unknown client costs the same
// hash, so timing does not reveal which client ids exist.
import type { FormFields } from '../http/form-body.js';
import type { ClientDirectory, OAuthClient } from './client-decider.js';
import { isClientId } from './client-decider.js';
import { InvalidClient, InvalidRequest } from './oauth-errors.js';
import { digestsEqual, sha256Hex } from './opaque-credentials.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** A form body as the body parser gives it: a repeated field arrives as an array. */
export type FormParameters = FormFields;

export interface AuthenticatedClient {
  readonly client: OAuthClient;
  readonly method: ClientAuthMethod;
}

export interface ClientAuthOptions {
  /** Introspection is for confidential clients only (spec). */
  readonly confidentialOnly?: boolean;
  /** Realm named in the Basic challenge. */
  readonly realm?: string;
}

/** Compared against when the client is unknown, so both paths hash once. */
const DUMMY_HASH = sha256Hex('guestpass: no such client');
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

interface Presented {
  readonly clientId: string;
  readonly secret: string | null;
  readonly method: ClientAuthMethod;
}

function field(body: FormParameters, name: string): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidRequest(`The ${name} parameter is repeated.`);
  // RFC 6749 §3.2: a parameter sent without a value is treated as omitted.
  return value === '' ? undefined : value;
}

/** application/x-www-form-urlencoded decoding of one Basic component (RFC 6749 §2.3.1, Appendix B). */
function formDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

function parseBasic(header: string, challenge: string): { clientId: string; secret: string } {
  const fail = () => new InvalidClient(challenge);
  const m = /^basic +([^ ]+) *$/i.exec(header.trim());
  if (!m || !BASE64.test(m[1]!)) throw fail();
  const decoded = Buffer.from(m[1]!, 'base64');
  const text = decoded.toString('utf8');
  // Invalid UTF-8 would have been replaced: refuse rather than guess.
  if (!Buffer.from(text, 'utf8').equals(decoded)) throw fail();
  const colon = text.indexOf(':');
  if (colon < 0) throw fail();
  const clientId = formDecode(text.slice(0, colon));
  const secret = formDecode(text.slice(colon + 1));
  if (clientId === null || secret === null || clientId === '') throw fail();
  return { clientId, secret };
}

function presentedCredentials(authorization: string | undefined, body: FormParameters, challenge: string): Presented {
  const bodyClientId = field(body, 'client_id');
  const bodySecret = field(body, 'client_secret');
  const header = authorization?.trim();
  if (header) {
    // Only Basic authenticates a client here; any other scheme is an unsupported method.
    if (!/^basic(?: |$)/i.test(header)) throw new InvalidClient(challenge);
    const basic = parseBasic(header, challenge);
    if (bodySecret !== undefined) throw new InvalidRequest('Use only one client authentication method.');
    if (bodyClientId !== undefined && bodyClientId !== basic.clientId) {
      throw new InvalidRequest('The client_id does not match the client credentials.');
    }
    return basic.secret === ''
      ? { clientId: basic.clientId, secret: null, method: 'none' }
      : { clientId: basic.clientId, secret: basic.secret, method: 'client_secret_basic' };
  }
  // RFC 6749 §5.2: no client authentication at all is invalid_client.
  if (bodyClientId === undefined) throw new InvalidClient();
  return bodySecret === undefined
    ? { clientId: bodyClientId, secret: null, method: 'none' }
    : { clientId: bodyClientId, secret: bodySecret, method: 'client_secret_post' };
}

export async function authenticateClient(
  authorization: string | undefined,
  body: FormParameters,
  clients: ClientDirectory,
  options: ClientAuthOptions = {},
): Promise<AuthenticatedClient> {
  const challenge = `Basic realm="${options.realm ?? 'guestpass'}", charset="UTF-8"`;
  const triedBasic = Boolean(authorization?.trim());
  const failure = () => new InvalidClient(triedBasic ? challenge : null);

  const presented = presentedCredentials(authorization, body, challenge);
  const client = isClientId(presented.clientId) ? await clients.findClient(presented.clientId) : null;

  if (presented.secret !== null) {
    const matches = digestsEqual(sha256Hex(presented.secret), client?.secretHash ?? DUMMY_HASH);
    if (!client || client.clientType !== 'confidential' || !matches) throw failure();
    return { client, method: presented.method };
  }
  if (!client || client.clientType === 'confidential' || options.confidentialOnly) throw failure();
  return { client, method: 'none' };
}
