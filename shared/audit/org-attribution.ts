// Which organization an event belongs to, for a tenant's audit export. Most events name it
// (`data.orgId`). The rest belong to something that did once: a stream whose earlier event named
// it (a token family, a sign-in session), a user (credentials, consents: a user is in one
// organization for life), a facility (a scan that matched no pass). The notary remembers those
// links (table audit_org_links) as it meets them, in log order, so the answer never depends on
// a read model. Events of no organization (the notary's own heads, the store's identity) are
// only in the operator's export.

/** What attribution may look up: the links recorded from earlier events. */
export type OrgLinks = ReadonlyMap<string, number>;

export const linkKeys = {
  stream: (name: string) => `stream:${name}`,
  user: (userId: number) => `user:${userId}`,
  facility: (facilityId: number) => `facility:${facilityId}`,
} as const;

interface EventLike {
  readonly streamName: string;
  readonly type: string;
  readonly data: unknown;
}

function numberField(data: unknown, name: string): number | null {
  const value = (data as Record<string, unknown> | null)?.[name];
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** The link keys an event's attribution may need (one lookup per batch). */
export function linkKeysOf(event: EventLike): string[] {
  const keys = [linkKeys.stream(event.streamName)];
  const userId = numberField(event.data, 'userId');
  if (userId !== null) keys.push(linkKeys.user(userId));
  const facilityId = numberField(event.data, 'facilityId');
  if (facilityId !== null) keys.push(linkKeys.facility(facilityId));
  return keys;
}

/** The organization of `event` (or null) and the links it establishes for later events. */
export function attributeEvent(event: EventLike, links: OrgLinks): { orgId: number | null; newLinks: Array<[string, number]> } {
  const userId = numberField(event.data, 'userId');
  const facilityId = numberField(event.data, 'facilityId');
  const orgId =
    numberField(event.data, 'orgId') ??
    links.get(linkKeys.stream(event.streamName)) ??
    (userId !== null ? links.get(linkKeys.user(userId)) : undefined) ??
    (facilityId !== null ? links.get(linkKeys.facility(facilityId)) : undefined) ??
    null;
  if (orgId === null) return { orgId, newLinks: [] };
  const newLinks: Array<[string, number]> = [];
  const learn = (key: string) => {
    if (!links.has(key)) newLinks.push([key, orgId]);
  };
  learn(linkKeys.stream(event.streamName));
  // Only an event that names its organization ties a user or a facility to it.
  if (numberField(event.data, 'orgId') !== null) {
    if (userId !== null) learn(linkKeys.user(userId));
    if (facilityId !== null) learn(linkKeys.facility(facilityId));
  }
  return { orgId, newLinks };
}

/**
 * What a tenant's export withholds of its own events: the leaf hash and the event's place stay
 * (the proof still holds), the content does not. A user's scrypt password hash is the one
 * secret-derived value in the log an offline search could attack.
 */
export function withheldReason(event: EventLike): string | null {
  if (event.type === 'UserAdded' && (event.data as { passwordHash?: unknown } | null)?.passwordHash != null) return 'carries a password hash';
  return null;
}
