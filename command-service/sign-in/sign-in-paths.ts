// Where the sign-in pages live. The passkey and federated routes (passkeys/, federated/) are
// mounted beside them under /signin.
export const SIGN_IN_PATHS = {
  home: '/',
  signIn: '/signin',
  secondFactor: '/signin/second-factor',
  consent: '/consent',
  account: '/account',
  totp: '/account/totp',
  signOut: '/account/sign-out',
  reauthenticate: '/account/reauthenticate',
  stylesheet: '/signin/style.css',
  /** Served by the passkey routes. */
  passkeyScript: '/signin/passkey.js',
  /** Served by the passkey routes. */
  passkeyRemove: '/account/passkeys/remove',
  /** Served by the federated routes. */
  federatedSignIn: '/signin/federated',
} as const;
