// `npx guestpass <command>`: the operator CLI. Each command with --json prints one JSON object.
import { randomUUID } from 'node:crypto';
import { loadConfig, ConfigError, type Config } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../shared/errors.js';
import { READ_MODELS, type OAuthClientRow } from '../shared/db/read-models.js';
import { ROLES, streams, type Role } from '../shared/domain/events.js';
import type { CommandContext } from '../shared/event-store/command-handler.js';
import { parsePosition, START, positionToString } from '../shared/event-store/event-store.js';
import { createOrganization } from '../command-service/organizations/create-organization.js';
import { addUser } from '../command-service/users/add-user.js';
import { addFacility } from '../command-service/facilities/add-facility.js';
import { suspendFacility, resumeFacility, deactivateFacility } from '../command-service/facilities/change-facility-status.js';
import { createApiKey } from '../command-service/api-keys/create-api-key.js';
import { revokeApiKey } from '../command-service/api-keys/revoke-api-key.js';
import { deleteClient, registerClient } from '../command-service/oauth-clients/register-client.js';
import { createInvitation } from '../command-service/invitations/create-invitation.js';
import { organizationDecider } from '../shared/domain/organization-decider.js';
import { KeyEncryptionKeyError } from '../shared/oauth/key-encryption-key.js';
import { SigningKeyRotationConflict } from '../shared/oauth/signing-keys.js';
import { ProjectionRunner } from '../projections/runner.js';
import { RebuildStopped, rebuildProjections } from '../projections/rebuild.js';
import { onShutdownSignal } from '../shared/shutdown-signal.js';
import { formatStatus, projectionStatus, statusToJson } from '../projections/status.js';
import { ProgressBar, showRebuildProgress } from '../projections/progress-bar.js';
import { ALL_PROJECTIONS } from '../projections/all-projections.js';
import { doorCommand } from './door.js';
import { MEMBER_USAGE, memberCommand } from './member-commands.js';
import { LIMITS_USAGE, limitsCommand } from './limits-commands.js';
import { listOutbox, outboxDir } from '../shared/delivery/outbox.js';
import { DatabaseUnreachable, defaultBaseUrl, embeddedServerRunning, openRuntime, type Runtime } from './runtime.js';
import { beginEmbeddedDataKekRotation, finishEmbeddedDataKekRotation } from './data-kek.js';
import { integerArg, list, noPositionals, optional, parse, required, spreadList, UsageError } from './cli-args.js';

const USAGE = `usage: guestpass <command> [options] [--json]

  org create --name N [--invite-allowance N]
  user create --org ORG --email E --first-name F --last-name L [--password P] [--role R]... [--invite-allowance N]
  facility create --org ORG --name N [--description D]
  facility suspend|resume|deactivate ID
  apikey create --org ORG --user ADMIN_ID --scopes S1,S2 [--expires-at ISO] [--allow-ip CIDR]...
  apikey revoke ID
  client create --org ORG --name N --type public|confidential --redirect-uri U [--redirect-uri U]...
                [--post-logout-redirect-uri U]... [--scopes S...]   (default scopes: openid profile email)
  client list --org ORG
  client delete --org ORG --client CLIENT_ID
  keys rotate
  keys rotate-data-kek   (rewraps every personal-data key under the current data key-encryption key)
  invite create --org ORG --email E [--role admin|self_invite|employee_view]
${MEMBER_USAGE}
${LIMITS_USAGE}
  projections status
  projections rebuild [NAME]
  events export [--stream S] [--from POSITION]
  outbox list [--limit N]   (the emails and SMS written to the data folder's outbox, newest first)
  door simulate --facility ID [--controllers N] [--exit]
  door scan --facility ID --qr VALUE [--exit]`;

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** True once the reader of `out` has gone (`events export | head`): a long listing stops there. */
  closed?(): boolean;
}

let stdoutClosed = false;
const stdio: Io = {
  out: (line) => {
    if (!stdoutClosed) process.stdout.write(line + '\n');
  },
  err: (line) => process.stderr.write(line + '\n'),
  closed: () => stdoutClosed,
};

let watchingStdout = false;
/**
 * A reader that stops early (`| head`) makes the next write fail with EPIPE, emitted on stdout:
 * unhandled, it would crash the CLI with a stack trace. Stop writing instead; the command ends quietly.
 */
function watchStdout(): void {
  if (watchingStdout) return;
  watchingStdout = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') stdoutClosed = true;
    else throw error;
  });
  // `2>&1 | head`: a message no one reads any more is no reason to crash either.
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/** `exitCode` (default 0): a command that did its work but reports a failure in part (member import's bad rows). */
type Result = { json: Record<string, unknown>; text: string; exitCode?: number };

function operatorContext(): CommandContext {
  return { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() };
}

/** Runs a write, then lets the read models catch up to it even when no server is running. */
async function write<T>(
  runtime: Runtime,
  work: (ctx: CommandContext) => Promise<T>,
): Promise<T> {
  const runner = new ProjectionRunner({ knex: runtime.knex, store: runtime.store, subjectKeys: runtime.deps.subjectKeys, contactHasher: runtime.contactHasher, logger: quietLogger }, { rebuildStale: false });
  await runner.start();
  try {
    return await work(operatorContext());
  } finally {
    await runner.stop();
  }
}

const quietLogger = createLogger(process.env.LOG_LEVEL ?? 'warn', 'guestpass-cli');

/**
 * Waits (inside `write`, whose runner does the work) until the named read models hold every event
 * logged so far, including other processes' writes. False when they did not within the wait.
 */
async function caughtUp(runtime: Runtime, readModels: readonly string[]): Promise<boolean> {
  const head = await runtime.store.headPosition();
  return runtime.watermark.waitFor(head, runtime.deps.projectionWaitMs, readModels);
}

function role(text: string): Role {
  if (!(ROLES as readonly string[]).includes(text)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  return text as Role;
}

async function org(runtime: Runtime, args: string[]): Promise<Result> {
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

async function user(runtime: Runtime, args: string[]): Promise<Result> {
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
    roles: list(values, 'role').map(role),
    inviteAllowance: allowance === undefined ? null : integerArg(allowance, '--invite-allowance', 0),
  };
  const { userId, memberId } = await write(runtime, (ctx) => addUser(runtime.deps, input, ctx));
  return { json: { id: userId, member_id: memberId }, text: `user ${userId} created (member ${memberId})` };
}

async function facility(runtime: Runtime, args: string[]): Promise<Result> {
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

async function apikey(runtime: Runtime, args: string[]): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values, positionals } = parse(rest, {
      org: { type: 'string' },
      user: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
      'allow-ip': { type: 'string', multiple: true },
    });
    noPositionals(positionals);
    const input = {
      orgId: integerArg(required(values, 'org'), '--org'),
      userId: integerArg(required(values, 'user'), '--user'),
      scopes: required(values, 'scopes').split(',').map((s) => s.trim()).filter(Boolean),
      expiresAt: optional(values, 'expires-at') ?? null,
      allowedIps: list(values, 'allow-ip'),
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

const CLIENT_TYPES = ['public', 'confidential'] as const;

function clientToJson(row: Omit<OAuthClientRow, 'org_id' | 'secret_hash' | 'deleted'>) {
  return {
    client_id: row.client_id,
    name: row.name,
    type: row.client_type,
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    scopes: row.allowed_scopes,
    created_at: row.created_at.toISOString(),
  };
}

function clientToText(c: ReturnType<typeof clientToJson>): string {
  return [
    `${c.client_id}  ${c.type}  ${c.name}  (created ${c.created_at})`,
    `  redirect URIs: ${c.redirect_uris.join(' ')}`,
    ...(c.post_logout_redirect_uris.length > 0 ? [`  post-logout redirect URIs: ${c.post_logout_redirect_uris.join(' ')}`] : []),
    `  scopes: ${c.scopes.join(' ')}`,
  ].join('\n');
}

async function client(runtime: Runtime, args: string[], io: Io): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const parsed = parse(rest, {
      org: { type: 'string' },
      name: { type: 'string' },
      type: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'post-logout-redirect-uri': { type: 'string', multiple: true },
      scopes: { type: 'string', multiple: true },
    });
    const { values } = parsed;
    const scopes = spreadList(parsed, 'scopes');
    noPositionals(scopes.rest);
    const clientType = required(values, 'type');
    if (!(CLIENT_TYPES as readonly string[]).includes(clientType)) throw new UsageError('--type must be public or confidential');
    const redirectUris = list(values, 'redirect-uri');
    if (redirectUris.length === 0) throw new UsageError('--redirect-uri is required (repeat it for several)');
    const registered = await write(runtime, (ctx) =>
      registerClient(
        runtime.deps,
        {
          orgId: integerArg(required(values, 'org'), '--org'),
          name: required(values, 'name'),
          clientType: clientType as (typeof CLIENT_TYPES)[number],
          redirectUris,
          postLogoutRedirectUris: list(values, 'post-logout-redirect-uri'),
          // Given but empty stays empty, so the decider refuses it rather than silently defaulting.
          ...('scopes' in values ? { allowedScopes: scopes.items } : {}),
        },
        ctx,
      ),
    );
    const { clientId, clientSecret } = registered;
    return {
      json: clientSecret === null ? { client_id: clientId } : { client_id: clientId, client_secret: clientSecret },
      text:
        clientSecret === null
          ? `public OAuth client ${clientId} created`
          : `confidential OAuth client ${clientId} created; client secret, shown once (only its hash is stored):\n${clientSecret}`,
    };
  }
  if (action === 'list') {
    const { values, positionals } = parse(rest, { org: { type: 'string' } });
    noPositionals(positionals);
    const orgId = integerArg(required(values, 'org'), '--org');
    const organization = await runtime.deps.handler.load(streams.organization(orgId), organizationDecider);
    if (organization.state.status === 'absent') throw new NotFoundError(`organization ${orgId} not found`);
    const rows = await write(runtime, async () => {
      if (!(await caughtUp(runtime, [READ_MODELS.oauthClients]))) {
        io.err('guestpass: warning: the oauth_clients read model is behind the log; the list may be incomplete');
      }
      // Named columns: the secret hash never leaves the read model through the CLI.
      return runtime
        .knex<OAuthClientRow>(READ_MODELS.oauthClients)
        .where({ org_id: orgId, deleted: false })
        .orderBy([{ column: 'created_at' }, { column: 'client_id' }])
        .select('client_id', 'name', 'client_type', 'redirect_uris', 'post_logout_redirect_uris', 'allowed_scopes', 'created_at');
    });
    const clients = rows.map(clientToJson);
    return {
      json: { clients },
      text: clients.length === 0 ? `organization ${orgId} has no OAuth clients` : clients.map(clientToText).join('\n'),
    };
  }
  if (action === 'delete') {
    const { values, positionals } = parse(rest, { org: { type: 'string' }, client: { type: 'string' } });
    noPositionals(positionals);
    const orgId = integerArg(required(values, 'org'), '--org');
    const clientId = required(values, 'client');
    await write(runtime, (ctx) => deleteClient(runtime.deps, { orgId, clientId }, ctx));
    return { json: { client_id: clientId, deleted: true }, text: `OAuth client ${clientId} deleted` };
  }
  throw new UsageError('client create|list|delete');
}

async function keys(runtime: Runtime, args: string[], config: Config): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'rotate-data-kek') return rotateDataKek(runtime, rest, config);
  if (action !== 'rotate') throw new UsageError('keys rotate|rotate-data-kek');
  noPositionals(parse(rest, {}).positionals);
  const { signingKeys } = await runtime.oauth(defaultBaseUrl(config, config.port));
  try {
    // Opening the current key first proves this KEK is the service's: a key sealed under another
    // one would leave the service unable to sign.
    await signingKeys.current();
  } catch (error) {
    if (!(error instanceof KeyEncryptionKeyError)) throw error;
    throw new ConfigError(`the key-encryption key does not open the current signing key (${error.message}); use the service's OAUTH_KEY_ENCRYPTION_KEY or GUESTPASS_DATA_DIR`);
  }
  let rotated: Awaited<ReturnType<typeof signingKeys.rotate>>;
  try {
    rotated = await signingKeys.rotate();
  } catch (error) {
    if (error instanceof SigningKeyRotationConflict) throw new ConflictError(error.message);
    throw error;
  }
  const retiresAt = rotated.retireAfter.toISOString();
  return {
    json: { kid: rotated.kid, previous_kid: rotated.previousKid, previous_retires_at: retiresAt },
    text:
      `signing key ${rotated.kid} now signs new tokens\n` +
      `previous key ${rotated.previousKid} stays in the JWKS until ${retiresAt}, when every token it signed has expired`,
  };
}

/**
 * Before the runtime opens (which rewraps under the ring it is given), the embedded default makes
 * a new data KEK current and keeps the old one as data-kek.previous. With DATA_KEY_ENCRYPTION_KEY
 * the operator has set the new key and moved the old one to DATA_KEY_ENCRYPTION_KEY_PREVIOUS.
 */
async function prepareDataKekRotation(args: string[], config: Config): Promise<void> {
  noPositionals(parse(args, {}).positionals);
  if (config.dataKeyEncryptionKey) return;
  // A running service keeps wrapping new keys under the KEK it read at start, which this command
  // is about to retire: they would be lost with data-kek.previous.
  if (await embeddedServerRunning(config.dataDir)) {
    throw new ConfigError(`a running service uses the data folder ${config.dataDir}: stop it before rotating its data key-encryption key`);
  }
  await beginEmbeddedDataKekRotation(config.dataDir);
}

async function rotateDataKek(runtime: Runtime, args: string[], config: Config): Promise<Result> {
  noPositionals(parse(args, {}).positionals);
  const { ring, rewrappedOnOpen } = runtime.dataKeys;
  // Opening the runtime did the rewrap; a second pass catches keys other processes wrapped meanwhile.
  const { rewrapped } = await runtime.dataKeys.rewrapAll();
  if (!config.dataKeyEncryptionKey) await finishEmbeddedDataKekRotation(config.dataDir);
  const total = rewrappedOnOpen + rewrapped;
  return {
    json: { rewrapped: total, kek_id: ring.currentKekId },
    text:
      `${total} key${total === 1 ? '' : 's'} rewrapped: every data key and the contact search key are wrapped under the data key-encryption key ${ring.currentKekId}` +
      (config.dataKeyEncryptionKey && config.previousDataKeyEncryptionKeys.length > 0 ? '\nDATA_KEY_ENCRYPTION_KEY_PREVIOUS can be removed once every instance runs with this DATA_KEY_ENCRYPTION_KEY' : ''),
  };
}

async function invite(runtime: Runtime, args: string[]): Promise<Result> {
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
    return createInvitation(runtime.deps, { orgId, email, role: offered === undefined ? null : role(offered) }, ctx);
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

async function projections(runtime: Runtime, args: string[], json: boolean, io: Io): Promise<Result> {
  const [action, ...rest] = args;
  const deps = { knex: runtime.knex, store: runtime.store, subjectKeys: runtime.deps.subjectKeys, contactHasher: runtime.contactHasher, logger: quietLogger };
  if (action === 'status') {
    noPositionals(parse(rest, {}).positionals);
    const report = await projectionStatus(deps);
    return { json: statusToJson(report), text: formatStatus(report) };
  }
  if (action === 'rebuild') {
    const { positionals } = parse(rest, {});
    // Checked before rebuilding anything: an unknown name is a usage error, not a failed rebuild.
    const known = ALL_PROJECTIONS.map((p) => p.name);
    const unknown = positionals.find((name) => !known.includes(name));
    if (unknown !== undefined) throw new UsageError(`unknown projection "${unknown}"; known: ${known.join(', ')}`);
    const result = await untilSignalled(io, (signal) =>
      rebuildProjections(positionals.length ? positionals : undefined, deps, {
        onProgress: json ? undefined : showRebuildProgress(new ProgressBar({ label: 'rebuild' })),
        signal,
      }),
    );
    const names = result.projections.map((p) => p.name);
    return {
      json: {
        rebuilt: result.projections.map((p) => ({ name: p.name, generation: p.generation, position: positionToString(p.position) })),
        events: result.events,
        duration_ms: Math.round(result.durationMs),
        events_per_second: Math.round(result.eventsPerSecond),
      },
      text: `rebuilt ${names.join(', ')}: ${result.events} events in ${(result.durationMs / 1000).toFixed(1)} s`,
    };
  }
  throw new UsageError('projections status|rebuild [NAME]');
}

/**
 * Runs work that stops cleanly through its signal: the first SIGINT or SIGTERM asks it to stop
 * (a rebuild ends its page and the index build under way, keeping its progress), a second one
 * exits at once. The runtime (an embedded server too) is closed after it by main.
 */
async function untilSignalled<T>(io: Io, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const release = onShutdownSignal(() => {
    // On a terminal, below the progress bar's line rather than over it.
    io.err(`${process.stderr.isTTY ? '\n' : ''}guestpass: stopping when the step under way ends (again to quit at once)`);
    stop.abort();
  });
  try {
    return await work(stop.signal);
  } finally {
    release();
  }
}

/** NDJSON of the log, for auditors: one event a line, in global order (or one stream's order). */
async function events(runtime: Runtime, args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'export') throw new UsageError('events export [--stream S] [--from POSITION]');
  const { values, positionals } = parse(rest, { stream: { type: 'string' }, from: { type: 'string' } });
  noPositionals(positionals);
  const stream = optional(values, 'stream');
  const from = optional(values, 'from');
  let count = 0;
  const print = (e: Awaited<ReturnType<Runtime['store']['readAll']>>[number]) => {
    count++;
    io.out(
      JSON.stringify({
        id: e.id,
        stream: e.streamName,
        revision: e.revision,
        position: positionToString(e.position),
        type: e.type,
        data: e.data,
        metadata: e.metadata,
        recorded_at: e.recordedAt.toISOString(),
      }),
    );
  };
  if (stream) {
    const fromRevision = from === undefined ? 0 : integerArg(from, '--from', 0);
    for (;;) {
      const page = await runtime.store.readStream(stream, { fromRevision: fromRevision + count, maxCount: 1000 });
      page.forEach(print);
      if (page.length < 1000 || io.closed?.()) break;
    }
  } else {
    let after = START;
    if (from !== undefined) {
      try {
        after = parsePosition(from);
      } catch {
        throw new UsageError('--from must be a position as printed by a previous export (COMMIT/PREPARE)');
      }
    }
    for (;;) {
      const page = await runtime.store.readAll({ after, maxCount: 1000 });
      page.forEach(print);
      if (page.length === 0 || io.closed?.()) break;
      after = page.at(-1)!.position;
    }
  }
}

/** The messages pass delivery wrote to `{dataDir}/outbox` while no SMTP_URL or SMS provider is set. */
async function outbox(args: string[], config: Config): Promise<Result> {
  const [action, ...rest] = args;
  if (action !== 'list') throw new UsageError('outbox list [--limit N]');
  const { values, positionals } = parse(rest, { limit: { type: 'string' } });
  noPositionals(positionals);
  const limit = integerArg(optional(values, 'limit') ?? '10', '--limit');
  const dir = outboxDir(config.dataDir);
  const messages = await listOutbox(dir, limit);
  const text = messages.map((m) =>
    [
      `${m.createdAt}  ${m.channel.padEnd(5)}  ${m.to}  ${m.subject ?? m.text ?? ''}`,
      ...(m.link ? [`  ${m.link}`] : []),
      `  ${m.file}`,
    ].join('\n'),
  );
  return {
    json: {
      dir,
      messages: messages.map((m) => ({ created_at: m.createdAt, channel: m.channel, to: m.to, subject: m.subject, text: m.text, link: m.link, file: m.file })),
    },
    text: messages.length === 0 ? `no messages in ${dir}` : text.join('\n'),
  };
}

export async function main(argv: string[], io: Io = stdio, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (io === stdio) watchStdout();
  const json = argv.includes('--json');
  const [group, ...rest] = argv;
  if (!group || group === '--help' || group === 'help' || group === '-h') {
    io.out(USAGE);
    return group ? 0 : 2;
  }
  let runtime: Runtime | null = null;
  try {
    const config = loadConfig(env);
    // Door commands talk MQTT to the controllers' broker, not to the database.
    if (group === 'door') return await doorCommand(rest, config, io);
    // The outbox is files in the data folder: no database.
    if (group === 'outbox') {
      const result = await outbox(rest, config);
      io.out(json ? JSON.stringify(result.json) : result.text);
      return 0;
    }
    const commands: Record<string, (r: Runtime) => Promise<Result | null>> = {
      org: (r) => org(r, rest),
      user: (r) => user(r, rest),
      facility: (r) => facility(r, rest),
      apikey: (r) => apikey(r, rest),
      client: (r) => client(r, rest, io),
      keys: (r) => keys(r, rest, config),
      invite: (r) => invite(r, rest),
      member: (r) => memberCommand(r, rest, { json, out: io.out, err: io.err, write }),
      limits: (r) => limitsCommand(r, rest, config),
      projections: (r) => projections(r, rest, json, io),
      events: async (r) => {
        await events(r, rest, io);
        return null;
      },
    };
    const command = commands[group];
    if (!command) throw new UsageError(`unknown command "${group}"\n${USAGE}`);
    if (group === 'keys' && rest[0] === 'rotate-data-kek') await prepareDataKekRotation(rest.slice(1), config);
    runtime = await openRuntime(config, quietLogger);
    const result = await command(runtime);
    if (result) io.out(json ? JSON.stringify(result.json) : result.text);
    return result?.exitCode ?? 0;
  } catch (error) {
    // A validation error's details say which value broke which rule (e.g. each bad redirect URI).
    const details = error instanceof ValidationError && error.details.length > 0 ? error.details : null;
    const message = (error instanceof Error ? error.message : String(error)) + (details ? `: ${details.join('; ')}` : '');
    const code = error instanceof UsageError ? 2 : error instanceof RebuildStopped ? 130 : 1;
    if (json) {
      const kind =
        error instanceof DomainError ? error.code
        : error instanceof UsageError ? 'usage'
        : error instanceof ConfigError ? 'config'
        : error instanceof DatabaseUnreachable ? 'unavailable'
        : error instanceof RebuildStopped ? 'stopped'
        : 'failed';
      io.out(JSON.stringify({ error: kind, message, ...(details ? { details } : {}) }));
    }
    else io.err(`guestpass: ${message}`);
    // A stack trace is for a bug; every expected failure is said in its one line above.
    const expected = [DomainError, UsageError, ConfigError, DatabaseUnreachable, RebuildStopped].some((kind) => error instanceof kind);
    if (!expected) {
      io.err((error as Error)?.stack ?? '');
    }
    return code;
  } finally {
    await runtime?.close();
  }
}
