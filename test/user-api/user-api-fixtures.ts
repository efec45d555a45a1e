// What the user-delegated API suites need besides the stack: access tokens minted directly (the
// sign-in pages are not needed to test the resource server), token families started and revoked
// through the command handler, invitations appended through a tiny decider of the test's own, passes
// created through the use case (so seeding spends none of the user's rate limit), and a gateway
// whose per-user rate limit a test can lower.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Decider } from '../../shared/domain/decider.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { streams, type Role } from '../../shared/domain/events.js';
import { userDecider } from '../../shared/domain/user-decider.js';
import { parseCreatePassInput } from '../../shared/domain/pass-request.js';
import { oauthStreams, type InvitationCreated } from '../../shared/oauth/oauth-events.js';
import { newFamilyId, sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { tokenFamilyDecider } from '../../shared/oauth/token-family-decider.js';
import { accessTokenAudience, mintAccessToken } from '../../shared/oauth/tokens.js';
import type { OAuthScope } from '../../shared/oauth/scopes.js';
import type { RateLimitPolicy } from '../../shared/http/rate-limit.js';
import { createPasses } from '../../command-service/passes/create-passes.js';
import { passBody, type Server, type Stack } from '../support/stack.js';

export const ALL_USER_SCOPES: OAuthScope[] = ['openid', 'profile', 'email', 'passes:read', 'passes:write', 'invites:read'];

export function operator(): CommandContext {
  return { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() };
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export interface TokenOptions {
  readonly userId: number;
  readonly clientId: string;
  readonly scopes?: readonly OAuthScope[];
  readonly familyId?: string;
  readonly now?: Date;
  readonly audience?: string;
  readonly issuer?: string;
}

/** An access token as the token endpoint mints it (default: every user scope, a fresh family). */
export async function accessToken(stack: Pick<Stack, 'oauth'>, o: TokenOptions): Promise<string> {
  const key = await stack.oauth.signingKeys.current();
  const issuer = o.issuer ?? stack.oauth.issuer;
  const minted = await mintAccessToken(key, {
    issuer,
    audience: o.audience ?? accessTokenAudience(stack.oauth.issuer),
    subject: String(o.userId),
    clientId: o.clientId,
    scopes: o.scopes ?? ALL_USER_SCOPES,
    familyId: o.familyId ?? newFamilyId(),
    now: o.now ?? new Date(),
  });
  return minted.token;
}

/** An organization with a facility, one OAuth client (every scope) and nothing else. */
export async function userTenant(stack: Stack, o: { inviteAllowance?: number; name?: string } = {}) {
  const orgId = await stack.seed.organization({ inviteAllowance: o.inviteAllowance ?? 1000, name: o.name });
  const [facilityId, client] = await Promise.all([stack.seed.facility(orgId, { name: 'Front door' }), stack.seed.client(orgId)]);
  return { orgId, facilityId, clientId: client.clientId };
}

export interface SignedInUser {
  readonly userId: number;
  readonly email: string;
  readonly token: string;
}

/** A user of the organization (default role self_invite) with an access token of `scopes`. */
export async function signedInUser(
  stack: Stack,
  tenant: { orgId: number; clientId: string },
  o: { scopes?: readonly OAuthScope[]; roles?: readonly Role[]; inviteAllowance?: number | null; email?: string; firstName?: string; lastName?: string } = {},
): Promise<SignedInUser> {
  const { userId, email } = await stack.seed.user(tenant.orgId, {
    roles: o.roles,
    inviteAllowance: o.inviteAllowance,
    email: o.email,
    firstName: o.firstName,
    lastName: o.lastName,
  });
  return { userId, email, token: await accessToken(stack, { userId, clientId: tenant.clientId, scopes: o.scopes }) };
}

/** Opens a token family as a code redemption would; returns its id. */
export async function startFamily(stack: Stack, grant: { orgId: number; userId: number; clientId: string; scopes?: readonly OAuthScope[] }): Promise<string> {
  const familyId = newFamilyId();
  await stack.deps.handler.handle(
    oauthStreams.tokenFamily(familyId),
    tokenFamilyDecider,
    {
      type: 'StartTokenFamily',
      data: {
        familyId,
        clientId: grant.clientId,
        orgId: grant.orgId,
        userId: grant.userId,
        scopes: [...(grant.scopes ?? ALL_USER_SCOPES)],
        authTime: new Date().toISOString(),
        amr: ['pwd'],
        sid: `sess_${randomBytes(12).toString('hex')}`,
        codeHash: sha256Hex(randomUUID()),
        refreshTokenHash: null,
        expiresAt: new Date(Date.now() + 3600_000).toISOString(),
      },
    },
    operator(),
  );
  return familyId;
}

/** Appends TokenFamilyRevoked; waits for the projections unless told not to. */
export async function revokeFamily(stack: Stack, familyId: string, o: { waitForProjections?: boolean } = {}): Promise<void> {
  const { position, events } = await stack.deps.handler.handle(
    oauthStreams.tokenFamily(familyId),
    tokenFamilyDecider,
    { type: 'RevokeTokenFamily', data: { familyId, reason: 'revoked_by_user' } },
    operator(),
  );
  expect(events.map((e) => e.type)).to.deep.equal(['TokenFamilyRevoked']);
  if (o.waitForProjections ?? true) expect(await stack.deps.watermark.waitFor(position, 5000)).to.equal(true);
}

export async function revokeRole(stack: Stack, user: { userId: number; orgId: number }, role: Role = 'self_invite'): Promise<void> {
  const { position } = await stack.deps.handler.handle(streams.user(user.userId), userDecider, { type: 'RevokeRole', data: { ...user, role } }, operator());
  expect(await stack.deps.watermark.waitFor(position, 5000)).to.equal(true);
}

// Invitations: a decider of the test's own that records the event it is given, with the address
// lower-cased as the real one (shared/domain/invitation-decider.ts) stores it.
type RecordInvitation = { type: 'RecordInvitation'; data: InvitationCreated['data'] };
const invitationRecorder: Decider<RecordInvitation, InvitationCreated, null> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => [{ type: 'InvitationCreated', data: command.data }],
};
let nextInviteId = 1_000 + Math.floor(Math.random() * 1_000_000);

export async function seedInvitation(
  stack: Stack,
  invitation: { orgId: number; email: string; userId?: number | null; role?: Role | null },
): Promise<number> {
  const inviteId = nextInviteId++;
  const { position } = await stack.deps.handler.handle(
    oauthStreams.invitation(inviteId),
    invitationRecorder,
    { type: 'RecordInvitation', data: { inviteId, orgId: invitation.orgId, email: invitation.email.toLowerCase(), userId: invitation.userId ?? null, role: invitation.role ?? null } },
    operator(),
  );
  expect(await stack.deps.watermark.waitFor(position, 5000)).to.equal(true);
  return inviteId;
}

/** Passes of `userId` created through the use case (no HTTP); returns their public ids, in creation order. */
export async function seedPasses(
  stack: Stack,
  owner: { orgId: number; userId: number; facilityId: number },
  overrides: Record<string, unknown> = {},
): Promise<string[]> {
  const now = new Date();
  const request = parseCreatePassInput(passBody(owner.facilityId, overrides), now);
  const { passes } = await createPasses(stack.deps, { orgId: owner.orgId, userId: owner.userId, request }, { ...operator(), now, actor: { kind: 'user', id: owner.userId } });
  return passes.map((p) => p.publicId);
}

/** Another gateway of the same deployment (same issuer) whose per-user limit is `rateLimit`. */
export async function serveUserApi(stack: Stack, rateLimit: Partial<RateLimitPolicy>): Promise<Server> {
  return stack.serve({ issuer: stack.baseUrl, userRateLimit: rateLimit });
}
