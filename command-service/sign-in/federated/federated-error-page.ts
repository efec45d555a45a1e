// The page a browser lands on when a federated sign-in ends without signing in. The callback is a
// top-level navigation back from the upstream provider, so the answer is a page, not the JSON
// error shape; its text is fixed and generic (the reason goes to the log only).
import type { HttpContext } from '../../../shared/http/http-state.js';
import { messagePage } from '../pages/message-page.js';
import { sendPage } from '../page-response.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';

export const FEDERATED_ERRORS = {
  /** The upstream identity is not linked and names no single local account (or its address is not verified). */
  noAccount: { status: 403, message: 'There is no account for this sign-in.' },
  /** Missing, expired or mismatched flow, an error from the provider, or a refused code or id_token. */
  failed: { status: 400, message: 'This sign-in could not be completed. Please try again.' },
  /** Discovery or the token endpoint did not answer. */
  unavailable: { status: 502, message: 'The sign-in provider is not available right now. Please try again later.' },
} as const;

export type FederatedError = keyof typeof FEDERATED_ERRORS;

export function renderFederatedError(ctx: HttpContext, error: FederatedError): void {
  const { status, message } = FEDERATED_ERRORS[error];
  const page = messagePage({ title: 'Sign-in failed', message, link: { href: SIGN_IN_PATHS.signIn, text: 'Back to sign-in' } });
  sendPage(ctx, page, status);
}
