// Which local account an upstream (federated) identity signs in, when it is not linked yet.
//
// Linking by email on first sign-in, and its trade-off: users need no extra step (no password
// to type to confirm the link), but the local account is then only as safe as the upstream's
// handling of email addresses: an upstream that lets someone claim an address they do not own,
// or that hands a departed user's address to someone new, would let that person into the local
// account. So a link is made only when
//   * the upstream is the one provider the operator configured (trusted like a workforce IdP),
//   * the upstream does not say the address is unverified (email_verified absent is accepted,
//     as several providers do not send it), unless the operator vouches for the upstream's
//     addresses (FEDERATED_TRUST_EMAIL: a workforce IdP that assigns them, or another instance of
//     this service, which reports email_verified false because it never mails a proof),
//   * exactly one local user has that address (an address shared across organizations is
//     ambiguous, and guessing would sign in to the wrong one),
//   * and the user has no other account of the same upstream linked already (the link decider),
// and the link is recorded (FederatedIdentityLinked) so it is auditable and later sign-ins go by
// (issuer, subject) alone, whatever happens to the address upstream.

export interface EmailClaims {
  readonly email?: unknown;
  readonly email_verified?: unknown;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

/** The address to look the user up by (lower-cased), or null when it is absent, malformed or unverified. */
export function linkableEmail(claims: EmailClaims | null | undefined, trustUnverified = false): string | null {
  if (!claims || typeof claims.email !== 'string') return null;
  // Some providers send the boolean as a string.
  if (!trustUnverified && (claims.email_verified === false || claims.email_verified === 'false')) return null;
  const email = claims.email.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : null;
}

/** The one user the address names, or null when none or several do. */
export function soleMatch<T>(users: readonly T[]): T | null {
  return users.length === 1 ? users[0]! : null;
}
