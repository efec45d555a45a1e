// `npx guestpass user ...`: users who sign in.
import { addUser } from '../command-service/users/add-user.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, list, noPositionals, optional, parse, required, UsageError } from './cli-args.js';
import { roleArg, write, type Result } from './cli-kit.js';

export async function userCommand(runtime: Runtime, args: string[]): Promise<Result> {
  const [action, ...rest] = args;
  if (action !== 'create') throw new UsageError('user create --org ORG --email E --first-name F --last-name L ...');
  const { values, positionals } = parse(rest, {
    org: { type: 'string' },
    email: { type: 'string' },
    'first-name': { type: 'string' },
    'last-name': { type: 'string' },
    password: { type: 'string' },
    role: { type: 'string', multiple: true },
    'invite-allowance': { type: 'string' },
  });
  noPositionals(positionals);
  const allowance = optional(values, 'invite-allowance');
  const input = {
    orgId: integerArg(required(values, 'org'), '--org'),
    email: required(values, 'email'),
    firstName: required(values, 'first-name'),
    lastName: required(values, 'last-name'),
    password: optional(values, 'password') ?? null,
    roles: list(values, 'role').map(roleArg),
    inviteAllowance: allowance === undefined ? null : integerArg(allowance, '--invite-allowance', 0),
  };
  const { userId, memberId } = await write(runtime, (ctx) => addUser(runtime.deps, input, ctx));
  return { json: { id: userId, member_id: memberId }, text: `user ${userId} created (member ${memberId})` };
}
