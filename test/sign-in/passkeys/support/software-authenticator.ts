// A software WebAuthn authenticator for tests: what a browser and a platform authenticator
// together return from navigator.credentials.create() and .get(), as the JSON the browser
// script posts. One P-256 (ES256) discoverable credential per instance, "none" attestation,
// user presence and verification set unless a test says otherwise, and a signature counter a
// test can set (0 = an authenticator that keeps none).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface CeremonyOverrides {
  /** The origin the "browser" writes into clientDataJSON (default: the authenticator's origin). */
  readonly origin?: string;
  /** The challenge signed (default: the one in the options). */
  readonly challenge?: string;
  /** Default true. */
  readonly userVerified?: boolean;
  /** The RP ID whose hash goes into authenticatorData (default: the options' rpId). */
  readonly rpId?: string;
}

function sha256(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(data).digest();
}

function b64url(data: Uint8Array): string {
  return Buffer.from(data).toString('base64url');
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

export class SoftwareAuthenticator {
  readonly credentialId: Buffer = randomBytes(32);
  /** The signature counter the next assertion reports (incremented after each by default). */
  counter: number;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private userHandle: string | null = null;

  constructor(
    /** The origin a browser on the service's pages reports. */
    readonly origin: string,
    options: { readonly counter?: number } = {},
  ) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.counter = options.counter ?? 1;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  /** navigator.credentials.create(), as RegistrationResponseJSON; advances the counter unless it is 0. */
  create(options: PublicKeyCredentialCreationOptionsJSON, overrides: CeremonyOverrides = {}): RegistrationResponseJSON {
    this.userHandle = options.user.id;
    const clientDataJSON = this.clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin);
    const authData = Buffer.concat([
      sha256(overrides.rpId ?? options.rp.id ?? new URL(this.origin).hostname),
      Buffer.from([this.flags(overrides) | FLAG_AT]),
      counterBytes(this.counter),
      Buffer.alloc(16), // AAGUID: none
      Buffer.from([this.credentialId.length >> 8, this.credentialId.length & 0xff]),
      this.credentialId,
      this.cosePublicKey(),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    if (this.counter > 0) this.counter += 1;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
    };
  }

  /** navigator.credentials.get(), as AuthenticationResponseJSON; advances the counter unless it is 0. */
  get(options: PublicKeyCredentialRequestOptionsJSON, overrides: CeremonyOverrides = {}): AuthenticationResponseJSON {
    const clientDataJSON = this.clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides.origin);
    const authenticatorData = Buffer.concat([
      sha256(overrides.rpId ?? options.rpId ?? new URL(this.origin).hostname),
      Buffer.from([this.flags(overrides)]),
      counterBytes(this.counter),
    ]);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey);
    if (this.counter > 0) this.counter += 1;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        ...(this.userHandle !== null ? { userHandle: this.userHandle } : {}),
      },
    };
  }

  private flags(overrides: CeremonyOverrides): number {
    return FLAG_UP | (overrides.userVerified === false ? 0 : FLAG_UV);
  }

  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  /** The credential public key as a COSE_Key (EC2, ES256, P-256). */
  private cosePublicKey(): Uint8Array {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return isoCBOR.encode(
      new Map<number, unknown>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]) as never,
    );
  }
}
