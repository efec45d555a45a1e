// The local user an upstream identity signs in: by its link (issuer, subject) in
// sign_in_credentials, or, on its first sign-in, by its email address when the upstream says it
// is verified (or the operator trusts the upstream's addresses), linking it then
// (federated-account.ts explains when, and why that is acceptable). An address that is not
// verified is not looked up: the outcome is no_account, the same as for an address no local
// user has, so the page the browser gets does not tell whether one does.
import { ConflictError } from '../../../shared/errors.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { READ_MODELS, type SignInCredentialRow, type UserRow } from '../../../shared/db/read-models.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { linkableEmail, soleMatch, type EmailClaims } from '../../../shared/sign-in/federated/federated-account.js';
import { federatedLinkDecider } from '../../../shared/sign-in/federated/federated-link-decider.js';
import { federatedCredentialKey } from '../../../projections/sign-in-credentials-projection.js';
import type { CommandDeps } from '../../command-deps.js';

export interface UpstreamIdentity {
  readonly issuer: string;
  readonly subject: string;
  /** The id_token's claims. */
  readonly claims: EmailClaims;
  /**
   * UserInfo's claims, fetched only when the id_token carries no linkable address (none, or one
   * not verified). Each source is judged on its own: an address from one is never vouched for by
   * the other's email_verified.
   */
  readonly userInfo: () => Promise<EmailClaims | null>;
}

export type FederatedOutcome =
  | { readonly outcome: 'signed_in'; readonly userId: number; readonly orgId: number; readonly linked: boolean }
  | { readonly outcome: 'no_account'; readonly reason: string };

export async function resolveFederatedUser(
  deps: CommandDeps,
  identity: UpstreamIdentity,
  ctx: Omit<CommandContext, 'actor'>,
  /** trustUnverifiedEmail: FEDERATED_TRUST_EMAIL, link by the upstream's address whatever its email_verified. */
  options: { readonly trustUnverifiedEmail?: boolean } = {},
): Promise<FederatedOutcome> {
  const { issuer, subject } = identity;
  const link = await deps.db<SignInCredentialRow>(READ_MODELS.signInCredentials)
    .where({ credential_key: federatedCredentialKey(issuer, subject) })
    .first();
  if (link) {
    const user = await deps.db<UserRow>(READ_MODELS.users).where({ user_id: link.user_id }).first();
    if (!user) return { outcome: 'no_account', reason: 'linked user not found' };
    return { outcome: 'signed_in', userId: Number(user.user_id), orgId: Number(user.org_id), linked: false };
  }

  const trust = options.trustUnverifiedEmail ?? false;
  let email = linkableEmail(identity.claims, trust);
  let userInfo: EmailClaims | null = null;
  if (email === null) {
    userInfo = await identity.userInfo();
    email = linkableEmail(userInfo, trust);
  }
  if (email === null) {
    // For the log only: the browser gets the same page either way.
    const unverified = [identity.claims, userInfo].some((claims) => linkableEmail(claims, true) !== null);
    return { outcome: 'no_account', reason: unverified ? 'email not verified by the provider' : 'no usable email from the provider' };
  }
  const candidates = await deps.db<UserRow>(READ_MODELS.users).whereRaw('lower(email) = ?', [email]).limit(2);
  const user = soleMatch(candidates);
  if (!user) return { outcome: 'no_account', reason: candidates.length === 0 ? 'no user with this email' : 'email is ambiguous' };

  const userId = Number(user.user_id);
  const orgId = Number(user.org_id);
  try {
    const result = await deps.handler.handle(
      oauthStreams.userCredentials(userId),
      federatedLinkDecider,
      { type: 'LinkFederatedIdentity', data: { userId, orgId, issuer, subject } },
      { ...ctx, actor: { kind: 'user', id: userId } },
    );
    // The next sign-in goes by (issuer, subject): let sign_in_credentials see the link first.
    await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.signInCredentials]);
  } catch (error) {
    if (error instanceof ConflictError) return { outcome: 'no_account', reason: 'another account of this provider is linked' };
    throw error;
  }
  return { outcome: 'signed_in', userId, orgId, linked: true };
}
