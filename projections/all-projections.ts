// Every read-model projection the runner keeps, in the order status lists them.
import type { AnyProjection } from './projection.js';
import { passListProjection } from './pass-list-projection.js';
import { passBatchesProjection } from './pass-batches-projection.js';
import { facilitiesProjection } from './facilities-projection.js';
import { organizationsProjection } from './organizations-projection.js';
import { usersProjection } from './users-projection.js';
import { apiKeysProjection } from './api-keys-projection.js';
import { inviteAllowanceUsageProjection } from './invite-allowance-usage-projection.js';
import { oauthClientsProjection } from './oauth-clients-projection.js';
import { revokedTokenFamiliesProjection } from './revoked-token-families-projection.js';
import { invitationsProjection } from './invitations-projection.js';
import { signInCredentialsProjection } from './sign-in-credentials-projection.js';
import { memberCountsProjection, memberDirectoryProjection } from './member-directory-projection.js';
import { frontDeskVisitsProjection } from './front-desk-visits-projection.js';
import { auditLogProjection } from './audit-log-projection.js';

export const ALL_PROJECTIONS: readonly AnyProjection[] = [
  passListProjection,
  passBatchesProjection,
  facilitiesProjection,
  organizationsProjection,
  usersProjection,
  apiKeysProjection,
  inviteAllowanceUsageProjection,
  oauthClientsProjection,
  revokedTokenFamiliesProjection,
  invitationsProjection,
  signInCredentialsProjection,
  memberDirectoryProjection,
  memberCountsProjection,
  frontDeskVisitsProjection,
  auditLogProjection,
];

/** The named projections, or all; throws on an unknown name so a CLI typo is not a silent no-op. */
export function selectProjections(names?: readonly string[], from: readonly AnyProjection[] = ALL_PROJECTIONS): AnyProjection[] {
  if (!names || names.length === 0) return [...from];
  return names.map((name) => {
    const found = from.find((p) => p.name === name);
    if (!found) throw new Error(`unknown projection "${name}"; known: ${from.map((p) => p.name).join(', ')}`);
    return found;
  });
}
