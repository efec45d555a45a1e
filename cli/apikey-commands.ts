// `npx guestpass apikey ...`: organization API keys.
import { createApiKey } from '../command-service/api-keys/create-api-key.js';
import { revokeApiKey } from '../command-service/api-keys/revoke-api-key.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, list, noPositionals, optional, parse, required, UsageError } from './cli-args.js';
import { write, type Result } from './cli-kit.js';

export async function apikeyCommand(runtime: Runtime, args: string[]): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values, positionals } = parse(rest, {
      org: { type: 'string' },
      user: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
      'allow-ip': { type: 'string', multiple: true },
      name: { type: 'string' },
    });
    noPositionals(positionals);
    const input = {
      orgId: integerArg(required(values, 'org'), '--org'),
      userId: integerArg(required(values, 'user'), '--user'),
      scopes: required(values, 'scopes').split(',').map((s) => s.trim()).filter(Boolean),
      expiresAt: optional(values, 'expires-at') ?? null,
      allowedIps: list(values, 'allow-ip'),
      name: optional(values, 'name') ?? null,
    };
    const { keyId, apiKey } = await write(runtime, (ctx) => createApiKey(runtime.deps, input, ctx));
    return { json: { id: keyId, api_key: apiKey }, text: `API key ${keyId} created; shown once:\n${apiKey}` };
  }
  if (action === 'revoke') {
    const { positionals } = parse(rest, {});
    if (positionals.length === 0) throw new UsageError('apikey revoke ID');
    noPositionals(positionals.slice(1));
    const keyId = positionals[0]!;
    const { revoked } = await write(runtime, (ctx) => revokeApiKey(runtime.deps, { keyId }, ctx));
    return { json: { id: keyId, revoked }, text: revoked ? `API key ${keyId} revoked` : `API key ${keyId} was already revoked` };
  }
  throw new UsageError('apikey create|revoke');
}
