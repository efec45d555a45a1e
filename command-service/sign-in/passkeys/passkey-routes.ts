// Passkeys (WebAuthn): registration from the account page and sign-in from the sign-in page.
import Router from '@koa/router';
import type { HttpState } from '../../../shared/http/http-state.js';
import type { CommandAppDeps } from '../../app.js';
import type { SignInKit } from '../sign-in-kit.js';

export function passkeyRoutes(_deps: CommandAppDeps, _kit: SignInKit): Router<HttpState> {
  return new Router<HttpState>();
}
