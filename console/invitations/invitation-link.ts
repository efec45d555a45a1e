// The invitation an emailed join link (/invitations/join/{id}.{token}) names: pending, and the
// link one that was issued for it (only the token's SHA-256 is on the log, compared in constant
// time); anything else is 404. Read by the join page's password form and its passkey ceremony.
import { timingSafeEqual } from 'node:crypto';
import type { CommandDeps } from '../../command-service/command-deps.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { NotFoundError } from '../../shared/errors.js';
import { invitationDecider } from '../../shared/domain/invitation-decider.js';
import { invitationMailStream } from '../../shared/domain/invitation-mail-events.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { linkHashOf } from '../../projections/invitation-mail-worker.js';
import { idParam } from '../console-guard.js';

const JOIN_REF = /^([1-9][0-9]{0,15})\.([A-Za-z0-9_-]{43})$/;

export interface LinkedInvitation {
  readonly inviteId: number;
  readonly orgId: number;
  readonly email: string;
  readonly organization: string;
  /** The address already has an account in the organization: the person signs in instead. */
  readonly hasAccount: boolean;
}

/** `ref`: the link's last path segment. */
export async function invitationOfLink(deps: CommandDeps, ref: string | undefined): Promise<LinkedInvitation> {
  const match = JOIN_REF.exec(ref ?? '');
  if (match === null) throw new NotFoundError('invitation not found');
  const inviteId = idParam(match[1]);
  const presented = Buffer.from(linkHashOf(match[2]!), 'utf8');
  const [issued, invitation] = await Promise.all([deps.store.readStream(invitationMailStream(inviteId)), deps.handler.load(oauthStreams.invitation(inviteId), invitationDecider)]);
  const known = issued.some((e) => e.type === 'InvitationLinkIssued' && timingSafeEqual(Buffer.from((e.data as { linkHash: string }).linkHash, 'utf8'), presented));
  const { state } = invitation;
  if (!known || state.status !== 'pending') throw new NotFoundError('invitation not found');
  const [org, account] = await Promise.all([
    deps.db(READ_MODELS.organizations).first('name').where({ org_id: state.orgId }),
    deps.db(READ_MODELS.users).first('user_id').where({ org_id: state.orgId }).whereRaw('lower(email) = ?', [state.email]),
  ]);
  return { inviteId, orgId: state.orgId, email: state.email, organization: (org?.name as string | undefined) ?? 'the organization', hasAccount: account !== undefined };
}
