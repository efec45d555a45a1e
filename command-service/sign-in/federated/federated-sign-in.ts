// The local user an upstream identity signs in: by its link (issuer, subject) in
// sign_in_credentials, or, on its first sign-in, by its email address, linking it then
// (federated-account.ts explains when, and why that is acceptable).
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
  /** UserInfo's claims, fetched only when the id_token carries no usable address. */
  readonly userInfo: () => Promise<EmailClaims | null>;
}

export type FederatedOutcome =
  | { readonly outcome: 'signed_in'; readonly userId: number; readonly orgId: number; readonly linked: boolean }
  | { readonly outcome: 'no_account'; readonly reason: string };

export async function resolveFederatedUser(
  deps: CommandDeps,
  identity: UpstreamIdentity,
  ctx: Omit<CommandContext, 'actor'>,
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
  const email = linkableEmail(identity.claims, trust) ?? linkableEmail(await identity.userInfo(), trust);
  if (email === null) return { outcome: 'no_account', reason: 'no verified email from the provider' };
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
