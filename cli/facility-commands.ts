// `npx guestpass facility ...`: an organization's facilities and their status.
import { addFacility } from '../command-service/facilities/add-facility.js';
import { suspendFacility, resumeFacility, deactivateFacility } from '../command-service/facilities/change-facility-status.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, noPositionals, optional, parse, required, UsageError } from './cli-args.js';
import { write, type Result } from './cli-kit.js';

export async function facilityCommand(runtime: Runtime, args: string[]): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values, positionals } = parse(rest, { org: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' } });
    noPositionals(positionals);
    const input = { orgId: integerArg(required(values, 'org'), '--org'), name: required(values, 'name'), description: optional(values, 'description') ?? null };
    const { facilityId } = await write(runtime, (ctx) => addFacility(runtime.deps, input, ctx));
    return { json: { id: facilityId }, text: `facility ${facilityId} created` };
  }
  const change = { suspend: suspendFacility, resume: resumeFacility, deactivate: deactivateFacility }[action ?? ''];
  if (!change) throw new UsageError('facility create|suspend|resume|deactivate');
  const { positionals } = parse(rest, {});
  if (positionals.length === 0) throw new UsageError(`facility ${action} ID`);
  noPositionals(positionals.slice(1));
  const facilityId = integerArg(positionals[0]!, 'ID');
  const { changed } = await write(runtime, (ctx) => change(runtime.deps, { facilityId }, ctx));
  return { json: { id: facilityId, changed }, text: changed ? `facility ${facilityId}: ${action}d` : `facility ${facilityId}: no change` };
}
