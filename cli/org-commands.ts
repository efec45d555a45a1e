// `npx guestpass org ...`: organizations.
import { createOrganization } from '../command-service/organizations/create-organization.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, noPositionals, optional, parse, required, UsageError } from './cli-args.js';
import { write, type Result } from './cli-kit.js';

export async function orgCommand(runtime: Runtime, args: string[]): Promise<Result> {
  const [action, ...rest] = args;
  if (action !== 'create') throw new UsageError('org create --name N [--invite-allowance N]');
  const { values, positionals } = parse(rest, { name: { type: 'string' }, 'invite-allowance': { type: 'string' } });
  noPositionals(positionals);
  const allowance = optional(values, 'invite-allowance');
  // Arguments are checked before `write` starts its projection runner: a usage error does no work.
  const input = { name: required(values, 'name'), ...(allowance !== undefined ? { inviteAllowance: integerArg(allowance, '--invite-allowance', 0) } : {}) };
  const { orgId } = await write(runtime, (ctx) => createOrganization(runtime.deps, input, ctx));
  return { json: { id: orgId }, text: `organization ${orgId} created` };
}
