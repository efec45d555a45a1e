// Use case: add a user to an organization (CLI `user create`, demo bootstrap). A password, when
// given, is hashed here with scrypt (shared/crypto/password-hash.ts): only the hash reaches the
// event, and the password is never logged or returned.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams, type Role } from '../../shared/domain/events.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { userDecider } from '../../shared/domain/user-decider.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../shared/crypto/password-hash.js';
import { NotFoundError, ValidationError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

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
}

export async function addUser(deps: CommandDeps, input: AddUserInput, ctx: CommandContext): Promise<{ userId: number; position: Position }> {
  const organization = await deps.handler.load(streams.organization(input.orgId), organizationDecider);
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${input.orgId} not found`);

  let passwordHash: string | null = null;
  if (input.password !== undefined && input.password !== null) {
    if (input.password.length < MIN_PASSWORD_LENGTH || input.password.length > MAX_PASSWORD_LENGTH) {
      throw new ValidationError(`password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
    }
    passwordHash = await hashPassword(input.password);
  }

  const [userId] = await deps.ids.next('user');
  if (userId === undefined) throw new Error('id allocator returned no user id');
  const result = await deps.handler.handle(
    streams.user(userId),
    userDecider,
    {
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
    },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.users]);
  return { userId, position: result.position };
}
