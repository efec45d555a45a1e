// Who we are to an authenticator: the WebAuthn relying party follows from the issuer (the
// service's public base URL). The RP ID is the issuer's host name, so a passkey is scoped to the
// site users see, and the only origin accepted in clientDataJSON is the issuer's origin, so an
// assertion made for a look-alike site is refused (phishing resistance).

export interface RelyingParty {
  /** The RP ID: the issuer's host name (no scheme, port or path). */
  readonly id: string;
  /** The one origin ceremonies may come from (scheme, host and port). */
  readonly origin: string;
  /** Shown by the authenticator next to the account. */
  readonly name: string;
}

export const RELYING_PARTY_NAME = 'Guest Pass';

export function relyingPartyOf(issuer: string): RelyingParty {
  const url = new URL(issuer);
  return { id: url.hostname, origin: url.origin, name: RELYING_PARTY_NAME };
}

/**
 * The WebAuthn user handle of a user: the decimal user id as UTF-8. It is opaque to the
 * authenticator, carries no personal data (WebAuthn §14.6.1 forbids e-mail addresses there) and
 * comes back with a discoverable credential's assertion, so it can be checked against the user
 * the credential is registered to.
 */
export function userHandleOf(userId: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(String(userId), 'utf8'));
}

/** The base64url form of userHandleOf, as it arrives in an assertion. */
export function encodedUserHandleOf(userId: number): string {
  return Buffer.from(String(userId), 'utf8').toString('base64url');
}
