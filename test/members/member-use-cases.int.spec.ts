import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../support/stack.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { streams } from '../../shared/domain/events.js';
import { MEMBER_ID_PATTERN } from '../../shared/domain/member-events.js';
import { memberDecider } from '../../shared/domain/member-decider.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { addMember } from '../../command-service/members/add-member.js';
import { updateMember } from '../../command-service/members/update-member.js';
import { deactivateMember, reactivateMember } from '../../command-service/members/change-member-status.js';
import { eraseMember } from '../../command-service/members/erase-member.js';
import { addUser } from '../../command-service/users/add-user.js';

const ctx = (): CommandContext => ({ correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('member use cases (against the real stack)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let orgId: number;

  before(async () => {
    stack = await startStack({ label: 'members' });
    orgId = await stack.seed.organization();
  });
  after(() => stack?.stop());

  const typesOf = async (memberId: string) => (await stack.store.readStream(streams.member(memberId))).map((e) => e.type);
  const stateOf = async (memberId: string) => (await stack.deps.handler.load(streams.member(memberId), memberDecider)).state;

  it('adds a member with an emp_ id, its names and contact sealed, and the directory row there when it answers', async () => {
    const { memberId } = await addMember(
      stack.deps,
      { orgId, firstName: 'Grace', lastName: 'Hopper', email: 'Grace@Navy.example', phone: '+1 555 010 0001', jobTitle: 'Rear Admiral', department: 'Computing', externalId: 'HR-100' },
      ctx(),
    );
    expect(memberId).to.match(new RegExp(MEMBER_ID_PATTERN));
    const [joined] = await stack.store.readStream(streams.member(memberId));
    expect(joined!.type).to.equal('MemberJoined');
    expect(joined!.data).to.deep.include({ memberId, orgId, userId: null, jobTitle: 'Rear Admiral', department: 'Computing', externalId: 'HR-100' });
    const text = JSON.stringify(joined!.data).toLowerCase();
    for (const secret of ['grace', 'hopper', 'navy.example', '5550100001']) expect(text).not.to.include(secret);
    // Read-your-writes: the directory holds the member as soon as the add answers.
    const row = await stack.db('member_directory').where({ member_id: memberId }).first();
    expect(Number(row?.org_id)).to.equal(orgId);
    expect(row).to.deep.include({ status: 'active', external_id: 'HR-100' });
  });

  it('refuses an unknown organization (404) and bad input (400, naming the fields) without writing', async () => {
    expect(await rejection(addMember(stack.deps, { orgId: 987654, firstName: 'A', lastName: 'B' }, ctx()))).to.be.instanceOf(NotFoundError);
    const bad = await rejection(addMember(stack.deps, { orgId, firstName: ' ', lastName: 'B', email: 'nope' }, ctx()));
    expect(bad).to.be.instanceOf(ValidationError);
    expect((bad as ValidationError).message).to.equal('first_name: required; email: not an address');
  });

  it('updates a profile as a patch, records nothing when nothing changes, and clears a field given as blank', async () => {
    const { memberId } = await addMember(stack.deps, { orgId, firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com' }, ctx());
    expect((await updateMember(stack.deps, memberId, { jobTitle: 'Cryptanalyst' }, ctx())).changed).to.equal(true);
    expect((await updateMember(stack.deps, memberId, { jobTitle: 'Cryptanalyst', email: 'ALAN@example.com ' }, ctx())).changed).to.equal(false);
    expect((await updateMember(stack.deps, memberId, { phone: '+44 20 7946 0000' }, ctx())).changed).to.equal(true);
    expect((await updateMember(stack.deps, memberId, { email: '' }, ctx())).changed).to.equal(true);
    expect(await typesOf(memberId)).to.deep.equal(['MemberJoined', 'MemberProfileChanged', 'MemberProfileChanged', 'MemberProfileChanged']);
    const state = await stateOf(memberId);
    expect(state.status).to.equal('active');
    if (state.status === 'absent') return;
    expect(state.jobTitle).to.equal('Cryptanalyst');
    // The contact is sealed under the member's one contact key, which every change reuses.
    const contactKeys = new Set((await stack.store.readStream(streams.member(memberId))).map((e) => (e.data as { contact: { keyId: string } | null }).contact?.keyId));
    expect([...contactKeys].filter(Boolean)).to.have.length(1);
    expect(await rejection(updateMember(stack.deps, `emp_${'0'.repeat(32)}`, { jobTitle: 'X' }, ctx()))).to.be.instanceOf(NotFoundError);
    expect(await rejection(updateMember(stack.deps, memberId, { lastName: '' }, ctx()))).to.be.instanceOf(ValidationError);
  });

  it('deactivates and reactivates, each idempotent', async () => {
    const { memberId } = await addMember(stack.deps, { orgId, firstName: 'Edsger', lastName: 'Dijkstra' }, ctx());
    expect((await deactivateMember(stack.deps, { memberId }, ctx())).changed).to.equal(true);
    expect((await deactivateMember(stack.deps, { memberId }, ctx())).changed).to.equal(false);
    expect((await stack.db('member_directory').where({ member_id: memberId }).first())?.status).to.equal('inactive');
    expect((await reactivateMember(stack.deps, { memberId }, ctx())).changed).to.equal(true);
    expect((await reactivateMember(stack.deps, { memberId }, ctx())).changed).to.equal(false);
    expect(await typesOf(memberId)).to.deep.equal(['MemberJoined', 'MemberDeactivated', 'MemberReactivated']);
    expect(await rejection(deactivateMember(stack.deps, { memberId, orgId: orgId + 1000 }, ctx()))).to.be.instanceOf(NotFoundError);
  });

  it('erases the contact by destroying its key, then the name with includeName; contact cannot come back', async () => {
    const { memberId } = await addMember(stack.deps, { orgId, firstName: 'Barbara', lastName: 'Liskov', email: 'barbara@example.com', phone: '5550100002' }, ctx());
    const before = await stateOf(memberId);
    if (before.status === 'absent') throw new Error('member missing');
    const keyIds = [before.nameKeyId, before.contactKeyId!];
    expect((await stack.deps.subjectKeys.getMany(keyIds)).size).to.equal(2);

    const contactOnly = await eraseMember(stack.deps, memberId, {}, ctx());
    expect(contactOnly).to.deep.include({ changed: true, includeName: false });
    const afterContact = await stack.deps.subjectKeys.getMany(keyIds);
    expect([...afterContact.keys()]).to.deep.equal([before.nameKeyId]);
    expect(await rejection(updateMember(stack.deps, memberId, { email: 'barbara@example.com' }, ctx()))).to.be.instanceOf(ConflictError);
    // A change without contact details is still allowed.
    expect((await updateMember(stack.deps, memberId, { department: 'MIT', phone: null }, ctx())).changed).to.equal(true);
    expect((await eraseMember(stack.deps, memberId, {}, ctx())).changed).to.equal(false);

    const all = await eraseMember(stack.deps, memberId, { includeName: true }, ctx());
    expect(all).to.deep.include({ changed: true, includeName: true });
    expect((await stack.deps.subjectKeys.getMany(keyIds)).size).to.equal(0);
    const erased = await rejection(updateMember(stack.deps, memberId, { department: 'CSAIL' }, ctx()));
    expect(erased).to.be.instanceOf(ConflictError);
    expect((erased as Error).message).to.match(/erased/);
    expect(await typesOf(memberId)).to.deep.equal(['MemberJoined', 'MemberErased', 'MemberProfileChanged', 'MemberErased']);
    const row = await stack.db('member_directory').where({ member_id: memberId }).first();
    expect(row).to.deep.include({ first_name: '', last_name: '', email_hash: null, contact: null });
  });

  it('adds every new user as a member of its organization, with the user id, names and email', async () => {
    const { userId, memberId } = await addUser(stack.deps, { orgId, email: 'Katherine@Example.com', firstName: 'Katherine', lastName: 'Johnson' }, ctx());
    expect(memberId).to.match(new RegExp(MEMBER_ID_PATTERN));
    const [joined] = await stack.store.readStream(streams.member(memberId));
    expect(joined!.data).to.deep.include({ memberId, orgId, userId });
    const state = await stateOf(memberId);
    if (state.status === 'absent') throw new Error('member missing');
    const keys = await stack.deps.subjectKeys.getMany([state.nameKeyId]);
    expect(keys.size).to.equal(1);
  });

  it('keeps every name, email and phone out of the log in plaintext', async () => {
    const events = await stack.store.readAll({ maxCount: 100_000 });
    const memberEvents = events.filter((e) => e.type.startsWith('Member') && e.streamName.startsWith('member-emp_'));
    expect(memberEvents.length).to.be.greaterThan(10);
    const text = memberEvents.map((e) => JSON.stringify(e.data)).join('\n').toLowerCase();
    for (const secret of ['grace', 'hopper', 'navy.example', 'alan', 'turing', 'example.com', 'edsger', 'dijkstra', 'barbara', 'liskov', 'katherine', 'johnson', '5550100', '442079460000']) {
      expect(text, secret).not.to.include(secret);
    }
  });
});
