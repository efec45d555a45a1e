// The JSON forms of navigator.credentials.create() and .get() results (WebAuthn Level 3
// RegistrationResponseJSON / AuthenticationResponseJSON) as the browser script posts them. The
// schemas bound sizes and alphabets before any byte is parsed; the WebAuthn library then checks
// the content. Extra members are allowed: browsers' own toJSON() adds some (publicKey, ...).
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { ValidationError } from '../../errors.js';
import { validate, type JsonSchema } from '../../http/schema-validation.js';

const b64url = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$' }) as const;

/** Credential ids are at most 1023 bytes (WebAuthn §5.8.1 in base64url: 1364 characters). */
const credentialId = b64url(1364);

/** The transports WebAuthn defines; anything else a browser reports is dropped, not stored. */
export const KNOWN_TRANSPORTS = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'] as const;

const common = {
  id: credentialId,
  rawId: credentialId,
  type: { const: 'public-key' },
  authenticatorAttachment: { enum: ['platform', 'cross-platform'] },
  clientExtensionResults: { type: 'object' },
} as const;

export const REGISTRATION_RESPONSE_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'rawId', 'type', 'response'],
  properties: {
    ...common,
    response: {
      type: 'object',
      required: ['clientDataJSON', 'attestationObject'],
      properties: {
        clientDataJSON: b64url(8192),
        attestationObject: b64url(65536),
        transports: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 32 } },
      },
    },
  },
};

export const AUTHENTICATION_RESPONSE_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'rawId', 'type', 'response'],
  properties: {
    ...common,
    response: {
      type: 'object',
      required: ['clientDataJSON', 'authenticatorData', 'signature'],
      properties: {
        clientDataJSON: b64url(8192),
        authenticatorData: b64url(8192),
        signature: b64url(2048),
        userHandle: { anyOf: [b64url(128), { type: 'null' }] },
      },
    },
  },
};

/** The posted credential: a JSON body's `credential` member, or a form's `credential` field holding JSON. */
function credentialOf(body: unknown): unknown {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).credential : undefined;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new ValidationError('invalid request body: credential is not JSON');
  }
}

export function parseRegistrationResponse(body: unknown): RegistrationResponseJSON {
  const response = validate<RegistrationResponseJSON>(REGISTRATION_RESPONSE_SCHEMA, credentialOf(body));
  return { ...response, clientExtensionResults: response.clientExtensionResults ?? {} };
}

export function parseAuthenticationResponse(body: unknown): AuthenticationResponseJSON {
  const response = validate<AuthenticationResponseJSON>(AUTHENTICATION_RESPONSE_SCHEMA, credentialOf(body));
  return { ...response, clientExtensionResults: response.clientExtensionResults ?? {} };
}

/** The transports worth remembering (they help the browser find the authenticator next time). */
export function knownTransports(reported: readonly string[] | undefined): string[] {
  const known: readonly string[] = KNOWN_TRANSPORTS;
  return [...new Set((reported ?? []).filter((t) => known.includes(t)))];
}
