// Sends each pending invitation its email, through the pass delivery channels (SMTP, else the
// outbox folder). It looks for pending invitations (the invitations read model) it has not taken
// on yet, claims one (invitation_mail_claims: one worker of many sends it; a claim left by a
// worker that died is taken over after CLAIM_STALE_MS), reads the invitation's mail stream, and
// unless an email was sent or finally refused there, issues a link (InvitationLinkIssued, its
// SHA-256 only) and sends it, then records InvitationEmailSent or InvitationEmailFailed.
//
// At least once: a crash after the provider accepted and before the outcome was recorded sends
// one more email, with a new link (both work). A transient failure is tried again on a later
// round, at most MAX_ATTEMPTS times. Invitations older than a week are left alone (the CLI's
// invitations from before this worker existed are not mailed years later).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import { DeliveryFailure, type MailSender } from '../shared/delivery/delivery-ports.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import { invitationMailStream, type InvitationMailEvent } from '../shared/domain/invitation-mail-events.js';
import { invitationMail } from '../shared/delivery/invitation-message.js';
import { toNewEvent, type CommandContext } from '../shared/event-store/command-handler.js';

export const CLAIM_STALE_MS = 5 * 60_000;
export const MAX_ATTEMPTS = 5;
const LOOK_BACK_MS = 7 * 24 * 60 * 60_000;

/** Where an invitation's link goes: `{base}/invitations/join/{inviteId}.{token}`. */
export function invitationLink(baseUrl: string, inviteId: number, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/invitations/join/${inviteId}.${token}`;
}

export function linkHashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface InvitationMailDeps {
  readonly knex: Knex;
  readonly store: EventStore;
  readonly mail: MailSender;
  readonly mailFrom: string;
  readonly baseUrl: string;
  readonly logger?: Logger;
  readonly pollIntervalMs?: number;
}

export class InvitationMailWorker {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly deps: InvitationMailDeps) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.round = this.sendDue()
        .then(() => undefined)
        .catch((error: unknown) => this.deps.logger?.warn({ err: error }, 'invitation mail round failed'))
        .finally(() => {
          this.round = null;
          if (!this.stopped) this.timer = setTimeout(tick, this.deps.pollIntervalMs ?? 1000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.round;
  }

  /** One round: every invitation due now. Exposed for tests. */
  async sendDue(): Promise<number> {
    const { knex } = this.deps;
    const since = new Date(Date.now() - LOOK_BACK_MS);
    const staleBefore = new Date(Date.now() - CLAIM_STALE_MS);
    const due = (await knex({ i: READ_MODELS.invitations })
      .leftJoin({ c: 'invitation_mail_claims' }, 'c.invite_id', 'i.invite_id')
      .leftJoin({ o: READ_MODELS.organizations }, 'o.org_id', 'i.org_id')
      .where('i.created_at', '>', since)
      .where((w) => w.whereNull('c.invite_id').orWhere((s) => s.where('c.done', false).where('c.claimed_at', '<', staleBefore).where('c.attempts', '<', MAX_ATTEMPTS)))
      .orderBy('i.created_at')
      .limit(20)
      .select('i.invite_id', 'i.org_id', 'i.email', 'i.role', 'o.name as organization')) as Array<{ invite_id: string | number; org_id: string | number; email: string; role: string | null; organization: string | null }>;
    let sent = 0;
    for (const row of due) {
      if (this.stopped) break;
      const inviteId = Number(row.invite_id);
      if (!(await this.claim(inviteId, staleBefore))) continue;
      if (await this.send({ inviteId, orgId: Number(row.org_id), email: row.email, role: row.role, organization: row.organization ?? 'your organization' })) sent++;
    }
    return sent;
  }

  /** True when this worker now holds the invitation's claim. */
  private async claim(inviteId: number, staleBefore: Date): Promise<boolean> {
    const result = await this.deps.knex.raw(
      `INSERT INTO invitation_mail_claims (invite_id, claimed_at, attempts) VALUES (?, now(), 1)
       ON CONFLICT (invite_id) DO UPDATE SET claimed_at = now(), attempts = invitation_mail_claims.attempts + 1
         WHERE NOT invitation_mail_claims.done AND invitation_mail_claims.claimed_at < ? AND invitation_mail_claims.attempts < ?
       RETURNING invite_id`,
      [inviteId, staleBefore, MAX_ATTEMPTS],
    );
    return (result.rows as unknown[]).length > 0;
  }

  private async finish(inviteId: number, done: boolean): Promise<void> {
    // Not done: make it due on the next round (a claim older than the stale limit).
    await this.deps.knex('invitation_mail_claims')
      .where({ invite_id: inviteId })
      .update(done ? { done: true } : { claimed_at: new Date(Date.now() - CLAIM_STALE_MS - 1000) });
  }

  private async send(invitation: { inviteId: number; orgId: number; email: string; role: string | null; organization: string }): Promise<boolean> {
    const { store, mail, mailFrom, baseUrl } = this.deps;
    const stream = invitationMailStream(invitation.inviteId);
    const history = (await store.readStream(stream)) as unknown as InvitationMailEvent[];
    const settled = history.some((e) => e.type === 'InvitationEmailSent' || (e.type === 'InvitationEmailFailed' && e.data.final));
    if (settled) {
      await this.finish(invitation.inviteId, true);
      return false;
    }
    const attempt = history.filter((e) => e.type === 'InvitationLinkIssued').length + 1;
    const token = randomBytes(32).toString('base64url');
    const ids = { inviteId: invitation.inviteId, orgId: invitation.orgId };
    const context: CommandContext = { correlationId: randomUUID(), causationId: null, actor: { kind: 'system', name: 'invitation-mail' }, now: new Date() };
    const record = (event: InvitationMailEvent) => store.appendToStream(stream, [toNewEvent(event, { ...context, now: new Date() })], 'any');
    await record({ type: 'InvitationLinkIssued', data: { ...ids, linkHash: linkHashOf(token) } });
    const message = invitationMail({
      inviteId: invitation.inviteId,
      to: invitation.email,
      from: mailFrom,
      organization: invitation.organization,
      role: invitation.role,
      link: invitationLink(baseUrl, invitation.inviteId, token),
      domain: new URL(baseUrl).hostname,
      attempt,
    });
    try {
      const receipt = await mail.send(message);
      await record({ type: 'InvitationEmailSent', data: { ...ids, providerMessageId: receipt.providerMessageId } });
      await this.finish(invitation.inviteId, true);
      return true;
    } catch (error) {
      const failure = error instanceof DeliveryFailure ? error : null;
      const final = failure?.permanent === true || attempt >= MAX_ATTEMPTS;
      await record({ type: 'InvitationEmailFailed', data: { ...ids, errorClass: failure?.errorClass ?? 'provider_unavailable', final } });
      await this.finish(invitation.inviteId, final);
      this.deps.logger?.warn({ inviteId: invitation.inviteId, errorClass: failure?.errorClass ?? 'provider_unavailable', final }, 'invitation email not sent');
      return false;
    }
  }
}
