// What every sign-in method shares (password, passkey, federated): the contract between the
// sign-in flow (sign-in-routes.ts, which implements it) and the methods mounted beside it.
import type { AuthenticationMethod } from '../../shared/oauth/oauth-events.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import type { HttpContext } from '../../shared/http/http-state.js';

export interface SignInKit {
  /**
   * The browser proved it is `user` with `amr`: start (or replace) the sign-in session and send
   * the browser on (a second factor when the method needs one and the user has it, then back to
   * the pending authorization, or to the account page). Responds; the caller returns after it.
   */
  complete(ctx: HttpContext, user: { readonly userId: number; readonly orgId: number }, amr: readonly AuthenticationMethod[]): Promise<void>;
  /** Throws (403) unless the request carries this browser's CSRF token: form field `csrf` or header `X-CSRF-Token`. */
  checkCsrf(ctx: HttpContext): void;
  /** The CSRF token to embed in this browser's forms and scripts. */
  csrfToken(ctx: HttpContext): string;
  /** The browser's signed-in session, or null. */
  session(ctx: HttpContext): Promise<SignInSession | null>;
}
