// Events of the invitation email (part of the DomainEvent union in events.ts), on the invitation's
// own mail stream `invitation-mail-{inviteId}`. The link's token is never in the log: a link is
// issued (its SHA-256 recorded) before the email carrying it is sent, so any link an invitee
// holds is one the join page can check; a retry after a crash issues a new link. No recipient
// appears in them (the address is the InvitationCreated's).
import type { AnySchemaObject } from 'ajv/dist/2020.js';

export type InvitationLinkIssued = { type: 'InvitationLinkIssued'; data: { inviteId: number; orgId: number; linkHash: string } };
export type InvitationEmailSent = { type: 'InvitationEmailSent'; data: { inviteId: number; orgId: number; providerMessageId: string | null } };
export type InvitationEmailFailed = {
  type: 'InvitationEmailFailed';
  data: { inviteId: number; orgId: number; errorClass: 'recipient_refused' | 'provider_rejected' | 'provider_unavailable'; final: boolean };
};

export type InvitationMailEvent = InvitationLinkIssued | InvitationEmailSent | InvitationEmailFailed;
type InvitationMailEventType = InvitationMailEvent['type'];
type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };
type DataOf<T extends InvitationMailEventType> = Extract<InvitationMailEvent, { type: T }>['data'];

export const invitationMailStream = (inviteId: number) => `invitation-mail-${inviteId}`;

const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };

export const invitationMailEventCatalogue: {
  readonly [T in InvitationMailEventType]: { readonly version: number; readonly properties: PropertiesOf<DataOf<T>> };
} = {
  InvitationLinkIssued: { version: 1, properties: { inviteId: ID, orgId: ID, linkHash: { type: 'string', pattern: '^[0-9a-f]{64}$' } } },
  InvitationEmailSent: { version: 1, properties: { inviteId: ID, orgId: ID, providerMessageId: { type: ['string', 'null'], maxLength: 200 } } },
  InvitationEmailFailed: {
    version: 1,
    properties: {
      inviteId: ID,
      orgId: ID,
      errorClass: { type: 'string', enum: ['recipient_refused', 'provider_rejected', 'provider_unavailable'] },
      final: { type: 'boolean' },
    },
  },
};
