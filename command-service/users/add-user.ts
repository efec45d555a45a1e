// Use case: add a user to an organization (CLI `user create`, demo bootstrap). A password, when
// given, is hashed here with scrypt (shared/crypto/password-hash.ts): only the hash reaches the
// event, and the password is never logged or returned. The email is claimed in the organization
// first (member-email-decider.ts), so no two of its users share an address. Every user is a member
// of the organization's directory: the member (names and email from the user, `userId` set) is
// added right after the user, and its id returned.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams, type Role } from '../../shared/domain/events.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { normaliseEmail, userDecider, type UserCommand } from '../../shared/domain/user-decider.js';
import { ALREADY_TAKEN, claimAbandoned, memberEmailDecider } from '../../shared/domain/member-email-decider.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../shared/crypto/password-hash.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { memberIdByEmail } from './member-by-email.js';
import { parseMemberProfile } from '../../shared/domain/member-input.js';
import { joinMember } from '../members/member-profile.js';
import { waitForMemberDirectory } from '../members/member-directory.js';

export interface AddUserInput {
  readonly orgId: number;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  /** Omit (or null) for a user who signs in another way. */
  readonly password?: string | null;
  /** Any of admin, self_invite, employee_view; checked by the decider. */
  readonly roles?: readonly string[];
  /** Own monthly invite allowance; omit or null for the organization's default. */
  readonly inviteAllowance?: number | null;
  /**
   * An id drawn beforehand (deps.ids.next('user')): an invitee joining with a passkey gives the
   * authenticator the account's user handle before the account exists. Omit to draw one here.
   */
  readonly userId?: number;
}

export async function addUser(
  deps: CommandDeps,
  input: AddUserInput,
  ctx: CommandContext,
): Promise<{ userId: number; memberId: string; position: Position }> {
  const organization = await deps.handler.load(streams.organization(input.orgId), organizationDecider);
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${input.orgId} not found`);

  let passwordHash: string | null = null;
  if (input.password !== undefined && input.password !== null) {
    if (input.password.length < MIN_PASSWORD_LENGTH || input.password.length > MAX_PASSWORD_LENGTH) {
      throw new ValidationError(`password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
    }
    passwordHash = await hashPassword(input.password);
  }

  const userId = input.userId ?? (await deps.ids.next('user'))[0];
  if (userId === undefined) throw new Error('id allocator returned no user id');
  const command: UserCommand = {
    type: 'AddUser',
    data: {
      userId,
      orgId: input.orgId,
      email: input.email,
      firstName: input.firstName,
      lastName: input.lastName,
      passwordHash,
      // Unknown role names are refused by the decider with a message listing the valid ones.
      roles: (input.roles ?? []) as readonly Role[],
      inviteAllowance: input.inviteAllowance ?? null,
    },
  };
  // Decided once on no user before the claim: input the decider refuses writes nothing at all.
  userDecider.decide(command, userDecider.initialState());
  // Likewise the member's profile: a user whose member could not be added is never written.
  const memberProfile = parseMemberProfile({ firstName: input.firstName, lastName: input.lastName, email: input.email });
  const email = normaliseEmail(input.email);
  await claimEmail(deps, input.orgId, email, userId, ctx);
  let position: Position;
  try {
    ({ position } = await deps.handler.handle(streams.user(userId), userDecider, command, ctx));
  } catch (error) {
    await releaseEmail(deps, input.orgId, email, userId, ctx);
    throw error;
  }
  const member = await joinMember(deps, input.orgId, memberProfile, userId, ctx);
  await Promise.all([deps.watermark.waitFor(position, deps.projectionWaitMs, [READ_MODELS.users]), waitForMemberDirectory(deps, member.position)]);
  return { userId, memberId: member.memberId, position: member.position };
}

/** Claims `email` (normalised) in the organization for the new user: 409 when another user of it has the address. */
async function claimEmail(deps: CommandDeps, orgId: number, email: string, userId: number, ctx: CommandContext): Promise<void> {
  const stream = streams.memberEmail(orgId, email);
  const at = ctx.now.toISOString();
  // Side by side: the users added before claims existed matter only when there is no holder.
  const [{ state }, unclaimedUser] = await Promise.all([deps.handler.load(stream, memberEmailDecider), hasUnclaimedUser(deps, orgId, email)]);
  let abandonedHolder: number | null = null;
  if (state.holder !== null) {
    const holder = await deps.handler.load(streams.user(state.holder), userDecider);
    if (holder.state.status === 'active') throw new ConflictError(ALREADY_TAKEN(orgId));
    if (!claimAbandoned(state.claimedAt, at)) {
      throw new ConflictError(`a user with this email is being added to organization ${orgId}; try again in a few minutes`);
    }
    // The claim's user never appeared: close its creation first, so it cannot land after the takeover.
    await deps.handler
      .handle(streams.user(state.holder), userDecider, { type: 'AbandonUserCreation', data: { userId: state.holder, orgId } }, ctx)
      .catch((error: unknown) => {
        throw error instanceof ConflictError ? new ConflictError(ALREADY_TAKEN(orgId)) : error; // it appeared meanwhile
      });
    abandonedHolder = state.holder;
  } else if (unclaimedUser) {
    throw new ConflictError(ALREADY_TAKEN(orgId));
  }
  await deps.handler.handle(stream, memberEmailDecider, { type: 'ClaimMemberEmail', data: { orgId, userId, at, abandonedHolder } }, ctx);
}

/**
 * Gives the address back after the user's append failed, unless the user was written after all
 * (a failure reported after the commit). Best effort: a claim left behind is taken over once
 * abandoned (member-email-decider.ts).
 */
async function releaseEmail(deps: CommandDeps, orgId: number, email: string, userId: number, ctx: CommandContext): Promise<void> {
  try {
    const { state } = await deps.handler.load(streams.user(userId), userDecider);
    if (state.status === 'active' && state.orgId === orgId && state.email === email) return;
    await deps.handler.handle(streams.memberEmail(orgId, email), memberEmailDecider, { type: 'ReleaseMemberEmail', data: { orgId, userId } }, ctx);
  } catch {
    // left for the takeover
  }
}

/**
 * A user added before addresses were claimed (CHANGELOG 1.0.4) holds no claim: found in the users
 * read model. Before any projection runner started (the CLI on a fresh database) there is no read
 * model, and nothing projected to find.
 */
async function hasUnclaimedUser(deps: CommandDeps, orgId: number, email: string): Promise<boolean> {
  try {
    return (await memberIdByEmail(deps.db, orgId, email)) !== null;
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return false;
    throw error;
  }
}

const UNDEFINED_TABLE = '42P01';
