// What every member write shares: new member ids, sealing a profile under the member's keys,
// opening what the stream holds to compare with, and the two profile writes without their
// read-your-writes wait (the import waits once at its end; the use cases wait per call).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { START } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { memberContactSubject, memberNameSubject, type MemberContact, type MemberName } from '../../shared/domain/member-events.js';
import {
  MEMBER_ERASED,
  memberDecider,
  type KnownMember,
  type MemberCommand,
  type MemberSecrets,
  type ProfileBasis,
  type SealedMemberProfile,
} from '../../shared/domain/member-decider.js';
import { memberContactOf, memberNameOf, type MemberProfile } from '../../shared/domain/member-input.js';
import { open, seal } from '../../shared/crypto/sealed-box.js';
import { pooledRandomBytes } from '../../shared/crypto/random-pool.js';
import type { SubjectKey } from '../../shared/crypto/subject-keys.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';

/** `emp_` + 128 random bits as lowercase hex (MEMBER_ID_PATTERN). */
export function newMemberId(): string {
  return `emp_${pooledRandomBytes(16).toString('hex')}`;
}

export async function assertOrganization(deps: CommandDeps, orgId: number): Promise<void> {
  const organization = await deps.handler.load(streams.organization(orgId), organizationDecider);
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${orgId} not found`);
}

/** The member's state, 404 when there is none (or it belongs to another organization than `orgId`). */
export async function loadMember(deps: CommandDeps, memberId: string, orgId?: number): Promise<KnownMember> {
  const { state } = await deps.handler.load(streams.member(memberId), memberDecider);
  if (state.status === 'absent' || (orgId !== undefined && state.orgId !== orgId)) throw new NotFoundError(`member ${memberId} not found`);
  return state;
}

/** The keys the members' current boxes are sealed under, in one read. */
export function keysOf(deps: CommandDeps, members: readonly KnownMember[]): Promise<Map<string, Buffer>> {
  const ids: string[] = [];
  for (const m of members) {
    if (!m.nameErased) ids.push(m.nameKeyId);
    if (m.contactKeyId !== null && !m.contactErased) ids.push(m.contactKeyId);
  }
  return ids.length === 0 ? Promise.resolve(new Map()) : deps.subjectKeys.getMany(ids);
}

/** The member's boxes opened: what a change is compared with. Null when the name can no longer be read. */
export function basisOf(member: KnownMember, keys: ReadonlyMap<string, Buffer>): ProfileBasis | null {
  const nameKey = keys.get(member.name.keyId);
  if (member.nameErased || nameKey === undefined) return null;
  let contact: MemberContact | null = null;
  if (member.contact !== null) {
    const contactKey = keys.get(member.contact.keyId);
    if (contactKey === undefined) return null;
    contact = open<MemberContact>(contactKey, member.contact);
  }
  return { name: member.name, contact: member.contact, plain: { name: open<MemberName>(nameKey, member.name), contact } };
}

/** The profile as it now is, in plain (for a partial update to start from). */
export function profileOf(member: KnownMember, basis: ProfileBasis): MemberProfile {
  return {
    firstName: basis.plain.name.firstName,
    lastName: basis.plain.name.lastName,
    email: basis.plain.contact?.email ?? null,
    phone: basis.plain.contact?.phone ?? null,
    jobTitle: member.jobTitle,
    department: member.department,
    externalId: member.externalId,
  };
}

function sameName(a: MemberName, b: MemberName): boolean {
  return a.firstName === b.firstName && a.lastName === b.lastName;
}
function sameContact(a: MemberContact | null, b: MemberContact | null): boolean {
  return a === null || b === null ? a === b : a.email === b.email && a.phone === b.phone;
}

/** A stored key of the member's, or a new one for the subject when it has none (or lost it). */
async function keyFor(deps: CommandDeps, keyId: string | null, keys: ReadonlyMap<string, Buffer>, subjectId: string): Promise<SubjectKey> {
  const key = keyId === null ? undefined : keys.get(keyId);
  return keyId !== null && key !== undefined ? { keyId, key } : deps.subjectKeys.create(subjectId);
}

/**
 * The profile sealed for `member`. What equals the basis keeps its box (nothing is sealed again,
 * so an unchanged profile is recognisably unchanged); what changed is sealed under the member's
 * key, created when it has none yet.
 */
export async function sealProfile(
  deps: CommandDeps,
  profile: MemberProfile,
  member: KnownMember,
  basis: ProfileBasis | null,
  keys: ReadonlyMap<string, Buffer>,
): Promise<{ profile: SealedMemberProfile; plain: MemberSecrets }> {
  const { memberId } = member;
  const name = memberNameOf(profile);
  const contact = memberContactOf(profile);
  if (member.nameErased) throw new ConflictError(MEMBER_ERASED(memberId));
  if (member.contactErased && contact !== null) throw new ConflictError(`${MEMBER_ERASED(memberId)}: its contact details cannot be added again`);
  const [nameBox, contactBox] = await Promise.all([
    basis !== null && sameName(basis.plain.name, name)
      ? basis.name
      : keyFor(deps, member.nameKeyId, keys, memberNameSubject(memberId)).then((key) => seal(key, name)),
    contact === null ? null
    : basis !== null && sameContact(basis.plain.contact, contact) ? basis.contact
    : keyFor(deps, member.contactKeyId, keys, memberContactSubject(memberId)).then((key) => seal(key, contact)),
  ]);
  return {
    profile: { name: nameBox, contact: contactBox, jobTitle: profile.jobTitle, department: profile.department, externalId: profile.externalId },
    plain: { name, contact },
  };
}

/** A member to add: its checked profile, and the user it is (null for a member without sign-in). */
export interface NewMember {
  readonly profile: MemberProfile;
  readonly userId: number | null;
}

/**
 * AddMember commands for new members of `orgId`, in order: fresh ids, names and contact sealed
 * under keys of their own, all the keys created with one write.
 */
export async function addMemberCommands(
  deps: CommandDeps,
  orgId: number,
  members: readonly NewMember[],
): Promise<Array<Extract<MemberCommand, { type: 'AddMember' }>>> {
  const drafts = members.map(({ profile, userId }) => ({ memberId: newMemberId(), profile, userId, contact: memberContactOf(profile) }));
  const subjects = drafts.flatMap((d) => (d.contact === null ? [memberNameSubject(d.memberId)] : [memberNameSubject(d.memberId), memberContactSubject(d.memberId)]));
  const keys = await deps.subjectKeys.createMany(subjects);
  let next = 0;
  return drafts.map(({ memberId, profile, userId, contact }) => {
    const name = seal(keys[next++]!, memberNameOf(profile));
    const contactBox = contact === null ? null : seal(keys[next++]!, contact);
    const { jobTitle, department, externalId } = profile;
    return { type: 'AddMember', data: { memberId, orgId, userId, name, contact: contactBox, jobTitle, department, externalId } };
  });
}

/** Appends MemberJoined for a new member (no organization check, no wait). */
export async function joinMember(
  deps: CommandDeps,
  orgId: number,
  profile: MemberProfile,
  userId: number | null,
  ctx: CommandContext,
): Promise<{ memberId: string; position: Position }> {
  const [command] = await addMemberCommands(deps, orgId, [{ profile, userId }]);
  const { memberId } = command!.data;
  const { position } = await deps.handler.handle(streams.member(memberId), memberDecider, command!, ctx);
  return { memberId, position };
}

/**
 * The ChangeMemberProfile command for `member`, compared with what its boxes hold. The import
 * asks the decider about it first, on the state it read, and skips the append when it says nothing.
 */
export async function profileChange(
  deps: CommandDeps,
  member: KnownMember,
  keys: ReadonlyMap<string, Buffer>,
  profile: MemberProfile,
  orgId?: number,
): Promise<MemberCommand> {
  const basis = basisOf(member, keys);
  if (basis === null && !member.nameErased) throw new Error(`the keys of member ${member.memberId} are missing`);
  const sealed = await sealProfile(deps, profile, member, basis, keys);
  return { type: 'ChangeMemberProfile', data: { memberId: member.memberId, ...(orgId !== undefined ? { orgId } : {}), ...sealed, basis } };
}

/** Appends the change (no wait); START when it recorded nothing. */
export async function changeProfile(deps: CommandDeps, memberId: string, command: MemberCommand, ctx: CommandContext): Promise<{ changed: boolean; position: Position }> {
  const result = await deps.handler.handle(streams.member(memberId), memberDecider, command, ctx);
  return { changed: result.events.length > 0, position: result.events.length > 0 ? result.position : START };
}
