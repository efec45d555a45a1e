// The audit notary as a role of the projections processes (and of `npm start`): one of them at a
// time holds its session lock and runs it; a standby takes over from the stored tree within about
// a second of the holder's process dying (shared/db/leadership-lock.ts).
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import { runWhileLeader, type LeaderRole } from '../shared/db/leadership-lock.js';
import { SESSION_LOCKS } from '../shared/db/session-lock.js';
import { AuditNotary, type AuditNotaryOptions } from './audit-notary.js';
import { AuditIntegrity } from './audit-sample-check.js';
import { Stopped } from './stoppable-retry.js';

export interface AuditNotaryRole extends LeaderRole {
  /** Mismatches found by this process's sample checks: its /readyz `audit_log` check. */
  readonly integrity: AuditIntegrity;
  /** The running notary while this process holds the role. */
  readonly notary: AuditNotary | null;
}

export function runAuditNotary(deps: { readonly knex: Knex; readonly store: EventStore; readonly kek: Uint8Array; readonly logger?: Logger } & Partial<AuditNotaryOptions>): AuditNotaryRole {
  const integrity = new AuditIntegrity();
  let notary: AuditNotary | null = null;
  const role = runWhileLeader({
    knex: deps.knex,
    key: SESSION_LOCKS.auditNotary,
    holder: 'audit notary',
    logger: deps.logger,
    start: async () => {
      const running = new AuditNotary({ ...deps, integrity });
      notary = running;
      const starting = running.start().catch((error: unknown) => {
        if (!(error instanceof Stopped)) deps.logger?.error({ err: error }, 'audit notary failed to start');
      });
      return async () => {
        await running.stop();
        await starting;
        notary = null;
      };
    },
  });
  return {
    integrity,
    get notary() {
      return notary;
    },
    get active() {
      return role.active;
    },
    stop: () => role.stop(),
  };
}
