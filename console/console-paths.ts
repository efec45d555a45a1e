// Where the tenant console lives. Every path here is routed to the command service (the embedded
// gateway sends everything but the API's reads there; deploy/gateway.nginx.conf names them).
export const CONSOLE_PATHS = {
  settings: '/settings',
  clients: '/settings/clients',
  apiKeys: '/settings/api-keys',
  facilities: '/settings/facilities',
  people: '/settings/people',
  members: '/settings/members',
  audit: '/settings/audit',
  passes: '/passes',
  visitors: '/visitors',
  invitations: '/invitations',
  stylesheet: '/console/style.css',
  script: '/console/console.js',
  /** POST: sign in again, then back to the page given (secret-handing and destructive actions need a recent sign-in). */
  reauthenticate: '/console/reauthenticate',
} as const;

/** The path prefixes the console answers under (for the gateway's routing and tests). */
export const CONSOLE_PREFIXES = ['/settings', '/passes', '/visitors', '/invitations', '/console'] as const;
