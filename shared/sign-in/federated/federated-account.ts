// Which local account an upstream (federated) identity signs in, when it is not linked yet.
//
// Linking by email on first sign-in, and its trade-off: users need no extra step (no password
// to type to confirm the link), but the local account is then only as safe as the upstream's
// handling of email addresses: an upstream that lets someone claim an address they do not own,
// or that hands a departed user's address to someone new, would let that person into the local
// account. So a link is made only when
//   * the upstream is the one provider the operator configured (trusted like a workforce IdP),
//   * the upstream says the address is verified: `email_verified` true (OpenID Connect Core
//     5.1). Absent is not verified: a provider that does not say so has not said that the
//     address belongs to whoever signs in (many let users type any address). The string "true"
//     counts as true: some providers send the boolean as a string (Sign in with Apple's id_token
//     and Amazon Cognito's userinfo have), and it is the same statement, in the same signed
//     token or TLS-protected response; any other value ("false", "yes", 1, null) is not true.
//     Unless the operator vouches for the upstream's addresses (FEDERATED_TRUST_EMAIL: a workforce
//     IdP that assigns them, or another instance of this service, which reports email_verified
//     false because it never mails a proof): then email_verified is not looked at at all,
//   * exactly one local user has that address (an address shared across organizations is
//     ambiguous, and guessing would sign in to the wrong one),
//   * and the user has no other account of the same upstream linked already (the link decider),
// and the link is recorded (FederatedIdentityLinked) so it is auditable and later sign-ins go by
// (issuer, subject) alone, whatever happens to the address upstream.
//
// An address that is not linkable is treated as no address: the sign-in goes on exactly as for
// an upstream account that matches no local user (federated-sign-in.ts), so the answer does not
// tell whether a local account has that address.

export interface EmailClaims {
  readonly email?: unknown;
  readonly email_verified?: unknown;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

/** Whether the upstream says the address is verified: true, or the string "true" (see above). */
export function emailVerified(claims: EmailClaims): boolean {
  return claims.email_verified === true || claims.email_verified === 'true';
}

/**
 * The address to look the user up by (lower-cased), or null when it is absent or malformed, or
 * not verified by the upstream unless `trustUpstreamEmail` (FEDERATED_TRUST_EMAIL).
 */
export function linkableEmail(claims: EmailClaims | null | undefined, trustUpstreamEmail = false): string | null {
  if (!claims || typeof claims.email !== 'string') return null;
  if (!trustUpstreamEmail && !emailVerified(claims)) return null;
  const email = claims.email.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : null;
}

/** The one user the address names, or null when none or several do. */
export function soleMatch<T>(users: readonly T[]): T | null {
  return users.length === 1 ? users[0]! : null;
}
