// Row shapes of the read models the projections keep and the services query. Each read model is
// queried through a view of this name, which points at the current generation table (blue/green
// rebuilds switch the view). Columns not listed (such as the idempotency position) are the
// projection runner's own.

export interface PassListRow {
  pass_id: number; // PK
  public_id: string; // unique
  org_id: number;
  facility_id: number;
  created_by: number;
  batch_id: string;
  stream_name: string; // guest-invites stream holding the pass's events
  status: 'expected' | 'registered' | 'checked_in' | 'checked_out' | 'cancelled';
  first_name: string | null; // null once the guest's key is destroyed
  last_name: string | null;
  email: string | null;
  phone: string | null;
  arrival_date: string; // YYYY-MM-DD
  arrival_time: string | null; // HH:MM
  valid_from: Date;
  valid_until: Date;
  qr_hash: string;
  created_at: Date;
  /** Lower-cased names, email and phone, for trigram search. */
  search_text: string;
}

export type DeliveryStatus = 'pending' | 'sent' | 'failed';

export interface PassBatchRow {
  batch_id: string; // PK
  link_hash: string | null; // unique: SHA-256 hex of the pass page token; null before the pass page existed
  org_id: number;
  facility_id: number;
  created_by: number;
  batch_size: number;
  /** Where the batch's first PassCreated (and its sealed guest data) is in the log. */
  stream_name: string;
  stream_revision: number;
  arrival_date: string;
  arrival_time: string | null;
  valid_from: Date;
  valid_until: Date;
  created_at: Date;
  /** null when the guest gave no address (or the batch predates delivery). */
  email_delivery: DeliveryStatus | null;
  sms_delivery: DeliveryStatus | null;
}

export interface FacilityRow {
  facility_id: number; // PK
  org_id: number;
  name: string;
  description: string | null;
  is_active: boolean;
  suspended: boolean;
  /** IANA name; 'UTC' until set. */
  time_zone: string;
  created_at: Date;
}

export interface OrganizationRow {
  org_id: number; // PK
  name: string;
  invite_allowance: number;
  /** Every pass of the organization, for the list's `total` without a count(*) over millions of rows. */
  pass_count: number;
  created_at: Date;
}

export interface UserRow {
  user_id: number; // PK
  org_id: number;
  email: string;
  first_name: string;
  last_name: string;
  password_hash: string | null;
  roles: string[];
  invite_allowance: number | null; // null = organization default
  created_at: Date;
}

export interface ApiKeyRow {
  key_id: string; // PK
  org_id: number;
  user_id: number;
  key_hash: string; // unique, SHA-256 hex of the whole key
  scopes: string[];
  expires_at: Date | null;
  allowed_ips: string[];
  name: string | null; // null: created before keys had names
  revoked: boolean;
  created_at: Date;
}

export interface InviteAllowanceUsageRow {
  usage_key: string; // PK: `${user_id}:${month}`
  user_id: number;
  month: string; // YYYY-MM (UTC)
  used: number;
}

export interface OAuthClientRow {
  client_id: string; // PK
  org_id: number;
  name: string;
  client_type: 'public' | 'confidential';
  secret_hash: string | null; // SHA-256 hex; null for public clients
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  allowed_scopes: string[];
  deleted: boolean;
  created_at: Date;
}

export interface RevokedTokenFamilyRow {
  family_id: string; // PK
  reason: string;
  revoked_at: Date;
}

export interface InvitationRow {
  invite_id: number; // PK
  org_id: number;
  email: string; // lower-cased
  user_id: number | null;
  role: string | null;
  status: 'pending';
  created_at: Date;
}

export interface SignInCredentialRow {
  credential_key: string; // PK: passkey:{id} or federated:{issuer} {subject}
  kind: 'passkey' | 'federated';
  user_id: number;
  created_at: Date;
}

export interface MemberDirectoryRow {
  member_id: string; // PK: the member's public id, `emp_<hex>`
  org_id: number;
  user_id: number | null; // never returned by the API
  /** '' once the name key is destroyed (MemberErased with includeName). */
  first_name: string;
  last_name: string;
  /** `first last`, for display and the trigram search on lower(name). */
  name: string;
  job_title: string | null;
  department: string | null;
  external_id: string | null; // the HR system's id; never returned by the API
  status: 'active' | 'inactive';
  created_at: Date;
  /** MemberContact still SEALED (as in the event): opened only for the contact tier. Null when none or erased. */
  contact: { keyId: string; iv: string; ciphertext: string; tag: string } | null;
  /** Keyed hashes (ContactHasher) of email and phone, for whole-value search; null when absent or erased. */
  email_hash: string | null;
  phone_hash: string | null;
}

/** Members per organization and status: the directory listing's `total` without a count(*). */
export interface MemberCountRow {
  org_id: number; // PK
  active: number;
  inactive: number;
}

export const READ_MODELS = {
  passList: 'pass_list',
  passBatches: 'pass_batches',
  facilities: 'facilities',
  organizations: 'organizations',
  users: 'users',
  apiKeys: 'api_keys',
  inviteAllowanceUsage: 'invite_allowance_usage',
  oauthClients: 'oauth_clients',
  revokedTokenFamilies: 'revoked_token_families',
  invitations: 'invitations',
  signInCredentials: 'sign_in_credentials',
  memberDirectory: 'member_directory',
  memberCounts: 'member_counts',
  frontDeskVisits: 'front_desk_visits',
  auditLog: 'audit_log',
} as const;

/** A pass as the front desk sees it (console /visitors). */
export interface FrontDeskVisitRow {
  pass_id: number; // PK
  public_id: string;
  org_id: number;
  facility_id: number;
  created_by: number;
  arrival_date: string; // YYYY-MM-DD
  arrival_time: string | null; // HH:MM
  /** Null once the guest's key is destroyed. */
  first_name: string | null;
  last_name: string | null;
  cancelled: boolean;
  checked_in_at: Date | null;
  checked_out_at: Date | null;
}

/** One event of an organization, as the audit page lists it: ids only, never personal data. */
export interface AuditLogRow {
  event_id: string; // PK
  org_id: number;
  occurred_at: Date | string;
  event_type: string;
  kind: string;
  actor_kind: 'user' | 'apiKey' | 'operator' | 'system';
  /** The acting user, or the user an API key acts for. */
  actor_user_id: number | null;
  actor_key_id: string | null;
  /** A system actor's name (the delivery worker, the door path). */
  actor_name: string | null;
  subject_type: string;
  subject_id: string;
}
