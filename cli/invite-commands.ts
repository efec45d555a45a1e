// `npx guestpass invite ...`: invitations to an organization.
import { READ_MODELS } from '../shared/db/read-models.js';
import { createInvitation } from '../command-service/invitations/create-invitation.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, noPositionals, optional, parse, required, UsageError } from './cli-args.js';
import { caughtUp, roleArg, write, type Result } from './cli-kit.js';

export async function inviteCommand(runtime: Runtime, args: string[]): Promise<Result> {
  const [action, ...rest] = args;
  if (action !== 'create') throw new UsageError('invite create --org ORG --email E [--role R]');
  const { values, positionals } = parse(rest, { org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } });
  noPositionals(positionals);
  const orgId = integerArg(required(values, 'org'), '--org');
  const email = required(values, 'email');
  const offered = optional(values, 'role');
  const invitation = await write(runtime, async (ctx) => {
    // The invitee is matched against the users read model: let it hold every user added so far.
    await caughtUp(runtime, [READ_MODELS.users]);
    return createInvitation(runtime.deps, { orgId, email, role: offered === undefined ? null : roleArg(offered) }, ctx);
  });
  return {
    json: { invite_id: invitation.inviteId, email: invitation.email, role: invitation.role, status: 'pending' },
    text:
      `invitation ${invitation.inviteId} for ${invitation.email}` +
      (invitation.role ? ` (role ${invitation.role})` : '') +
      (invitation.userId !== null ? `, addressed to user ${invitation.userId}` : '') +
      ' is pending',
  };
}
