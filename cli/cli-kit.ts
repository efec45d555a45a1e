// What every command group of the operator CLI shares: its output, its result, the operator's
// command context, and the write wrapper that keeps the read models current for the command's
// read-your-writes (cli/guestpass.ts dispatches to the groups).
import { randomUUID } from 'node:crypto';
import { createLogger } from '../shared/logger.js';
import { ROLES, type Role } from '../shared/domain/events.js';
import type { CommandContext } from '../shared/event-store/command-handler.js';
import { ProjectionRunner } from '../projections/runner.js';
import type { Runtime } from '../runtime/runtime.js';
import { UsageError } from './cli-args.js';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** True once the reader of `out` has gone (`events export | head`): a long listing stops there. */
  closed?(): boolean;
}

/** `exitCode` (default 0): a command that did its work but reports a failure in part (member import's bad rows). */
export type Result = { json: Record<string, unknown>; text: string; exitCode?: number };

export function operatorContext(): CommandContext {
  return { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() };
}

/** Runs a write, then lets the read models catch up to it even when no server is running. */
export async function write<T>(
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

export const quietLogger = createLogger(process.env.LOG_LEVEL ?? 'warn', 'guestpass-cli');

/**
 * Waits (inside `write`, whose runner does the work) until the named read models hold every event
 * logged so far, including other processes' writes. False when they did not within the wait.
 */
export async function caughtUp(runtime: Runtime, readModels: readonly string[]): Promise<boolean> {
  const head = await runtime.store.headPosition();
  return runtime.watermark.waitFor(head, runtime.deps.projectionWaitMs, readModels);
}

export function roleArg(text: string): Role {
  if (!(ROLES as readonly string[]).includes(text)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  return text as Role;
}
