// The console's navigation: each entry shown only to those holding its role (null: anyone signed
// in). A section added to the console adds its line here.
import type { Role } from '../shared/domain/events.js';
import { SIGN_IN_PATHS } from '../command-service/sign-in/sign-in-paths.js';
import { CONSOLE_PATHS } from './console-paths.js';

export interface NavItem {
  readonly href: string;
  readonly text: string;
  readonly role: Role | null;
}

export const CONSOLE_NAV: readonly NavItem[] = [
  { href: CONSOLE_PATHS.clients, text: 'Clients', role: 'admin' },
  { href: CONSOLE_PATHS.apiKeys, text: 'API keys', role: 'admin' },
  { href: CONSOLE_PATHS.facilities, text: 'Facilities', role: 'admin' },
  { href: CONSOLE_PATHS.people, text: 'People', role: 'admin' },
  { href: CONSOLE_PATHS.members, text: 'Members', role: 'admin' },
  { href: CONSOLE_PATHS.audit, text: 'Audit log', role: 'admin' },
  { href: CONSOLE_PATHS.passes, text: 'Passes', role: 'self_invite' },
  { href: CONSOLE_PATHS.visitors, text: 'Visitors', role: 'admin' },
  { href: CONSOLE_PATHS.invitations, text: 'Invitations', role: null },
  { href: SIGN_IN_PATHS.account, text: 'Account', role: null },
];

/** The entries `roles` may see. */
export function navFor(roles: readonly Role[]): NavItem[] {
  return CONSOLE_NAV.filter((item) => item.role === null || roles.includes(item.role));
}
