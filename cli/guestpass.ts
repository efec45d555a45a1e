// `npx guestpass <command>`: the operator CLI. Each command with --json prints one JSON object.
// This module reads the command line and dispatches; each command group is a module of its own
// (`{group}-commands.ts`, door.ts), sharing cli-kit.ts.
import { loadConfig, ConfigError } from '../shared/config.js';
import { DomainError, ValidationError } from '../shared/errors.js';
import { RebuildStopped } from '../projections/rebuild.js';
import { doorCommand } from './door.js';
import { MEMBER_USAGE, memberCommand } from './member-commands.js';
import { LIMITS_USAGE, limitsCommand } from './limits-commands.js';
import { DatabaseUnreachable, openRuntime, type Runtime } from '../runtime/runtime.js';
import { UsageError } from './cli-args.js';
import { apikeyCommand } from './apikey-commands.js';
import { quietLogger, write, type Io, type Result } from './cli-kit.js';
import { clientCommand } from './client-commands.js';
import { eventsCommand } from './events-commands.js';
import { facilityCommand } from './facility-commands.js';
import { inviteCommand } from './invite-commands.js';
import { keysCommand, prepareDataKekRotation } from './keys-commands.js';
import { orgCommand } from './org-commands.js';
import { outboxCommand } from './outbox-commands.js';
import { projectionsCommand } from './projections-commands.js';
import { userCommand } from './user-commands.js';

export type { Io };
import { AUDIT_USAGE, auditCommand } from './audit-commands.js';

const USAGE = `usage: guestpass <command> [options] [--json]

  org create --name N [--invite-allowance N]
  user create --org ORG --email E --first-name F --last-name L [--password P] [--role R]... [--invite-allowance N]
  facility create --org ORG --name N [--description D]
  facility suspend|resume|deactivate ID
  apikey create --org ORG --user ADMIN_ID --scopes S1,S2 [--name NAME] [--expires-at ISO] [--allow-ip CIDR]...
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
${AUDIT_USAGE}
  outbox list [--limit N]   (the emails and SMS written to the data folder's outbox, newest first)
  door simulate --facility ID [--controllers N] [--exit]
  door scan --facility ID --qr VALUE [--exit]`;

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
      const result = await outboxCommand(rest, config);
      io.out(json ? JSON.stringify(result.json) : result.text);
      return 0;
    }
    if (group === 'audit') return await auditCommand(rest, { config, json, out: io.out, err: io.err, closed: io.closed, openRuntime: () => openRuntime(config, quietLogger) });
    const commands: Record<string, (r: Runtime) => Promise<Result | null>> = {
      org: (r) => orgCommand(r, rest),
      user: (r) => userCommand(r, rest),
      facility: (r) => facilityCommand(r, rest),
      apikey: (r) => apikeyCommand(r, rest),
      client: (r) => clientCommand(r, rest, io),
      keys: (r) => keysCommand(r, rest, config),
      invite: (r) => inviteCommand(r, rest),
      member: (r) => memberCommand(r, rest, { json, out: io.out, err: io.err, write }),
      limits: (r) => limitsCommand(r, rest, config),
      projections: (r) => projectionsCommand(r, rest, json, io),
      events: async (r) => {
        await eventsCommand(r, rest, io);
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
