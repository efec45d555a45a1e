// Seeding the member directory for the end-to-end suites: MemberJoined and the other member events
// appended straight to the member's stream, with the name and contact sealed under keys made by
// the stack's own subject key store, exactly as the member commands seal them. (The commands
// themselves are another slice's, tested there.) Each seed waits for the read models.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { seal } from '../../shared/crypto/sealed-box.js';
import { streams } from '../../shared/domain/events.js';
import { memberContactSubject, memberNameSubject, type MemberDomainEvent } from '../../shared/domain/member-events.js';
import type { Position } from '../../shared/event-store/event-store.js';
import type { Stack } from '../support/stack.js';

export interface SeedMember {
  readonly orgId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email?: string | null;
  readonly phone?: string | null;
  readonly jobTitle?: string | null;
  readonly department?: string | null;
  readonly externalId?: string | null;
  readonly userId?: number | null;
  /** Default now; members list newest first by it. */
  readonly occurredAt?: string;
}

export const newMemberId = () => `emp_${randomBytes(16).toString('hex')}`;

async function append(stack: Stack, memberId: string, event: MemberDomainEvent, occurredAt = new Date().toISOString()): Promise<Position> {
  const { position } = await stack.store.appendToStream(
    streams.member(memberId),
    [
      {
        id: randomUUID(),
        type: event.type,
        data: event.data,
        metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, occurredAt, schemaVersion: 1 },
      },
    ],
    'any',
  );
  return position;
}

async function settled(stack: Stack, position: Position): Promise<void> {
  expect(await stack.deps.watermark.waitFor(position, 10_000), 'read models caught up').to.equal(true);
}

/** Appends MemberJoined (names and contact sealed under new keys); returns the member id once projected. */
export async function seedMember(stack: Stack, m: SeedMember, o: { wait?: boolean } = {}): Promise<string> {
  const memberId = newMemberId();
  const nameKey = await stack.deps.subjectKeys.create(memberNameSubject(memberId));
  const email = m.email === undefined ? null : m.email;
  const phone = m.phone === undefined ? null : m.phone;
  const contact = email !== null || phone !== null ? seal(await stack.deps.subjectKeys.create(memberContactSubject(memberId)), { email, phone }) : null;
  const position = await append(
    stack,
    memberId,
    {
      type: 'MemberJoined',
      data: {
        memberId,
        orgId: m.orgId,
        userId: m.userId ?? null,
        name: seal(nameKey, { firstName: m.firstName, lastName: m.lastName }),
        contact,
        jobTitle: m.jobTitle ?? null,
        department: m.department ?? null,
        externalId: m.externalId ?? null,
      },
    },
    m.occurredAt,
  );
  if (o.wait ?? true) await settled(stack, position);
  return memberId;
}

export async function deactivateMember(stack: Stack, orgId: number, memberId: string): Promise<void> {
  await settled(stack, await append(stack, memberId, { type: 'MemberDeactivated', data: { memberId, orgId } }));
}

/** As the erase command does: destroy the keys first, then record the fact. */
export async function eraseMember(stack: Stack, orgId: number, memberId: string, includeName: boolean): Promise<void> {
  await stack.deps.subjectKeys.destroy(memberContactSubject(memberId));
  if (includeName) await stack.deps.subjectKeys.destroy(memberNameSubject(memberId));
  await settled(stack, await append(stack, memberId, { type: 'MemberErased', data: { memberId, orgId, includeName } }));
}
