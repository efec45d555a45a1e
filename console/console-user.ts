// Who is using the console on this request: the signed-in session's user as the users read model
// has them now (so a role taken away closes its pages at once), kept on the request by the guard.
import type { Role } from '../shared/domain/events.js';
import type { HttpContext } from '../shared/http/http-state.js';

export interface ConsoleUser {
  readonly userId: number;
  readonly orgId: number;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly roles: readonly Role[];
  /** Signed in within the last 10 minutes (session-decider.ts): secrets and destruction allowed. */
  readonly recentSignIn: boolean;
}

const users = new WeakMap<HttpContext, ConsoleUser>();

export function setConsoleUser(ctx: HttpContext, user: ConsoleUser): void {
  users.set(ctx, user);
}

/** The request's user; only for handlers behind the guard (console-guard.ts). */
export function consoleUser(ctx: HttpContext): ConsoleUser {
  const user = users.get(ctx);
  if (user === undefined) throw new Error('consoleUser() called on a route without the console guard');
  return user;
}

export function hasRole(user: ConsoleUser, role: Role): boolean {
  return user.roles.includes(role);
}
