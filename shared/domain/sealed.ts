// The sealed-value shape that events carry. Its own module, below events.ts and the event modules
// events.ts gathers (member-events.ts), so they need not import each other back.

/** Ciphertext of a JSON value under a subject key (AES-256-GCM), all base64url. */
export interface Sealed {
  readonly keyId: string;
  readonly iv: string;
  readonly ciphertext: string;
  readonly tag: string;
}
