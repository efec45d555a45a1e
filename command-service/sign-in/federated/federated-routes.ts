// Federated sign-in with the upstream OpenID Provider named by FEDERATED_ISSUER.
import Router from '@koa/router';
import type { HttpState } from '../../../shared/http/http-state.js';
import type { CommandAppDeps } from '../../app.js';
import type { SignInKit } from '../sign-in-kit.js';

export function federatedRoutes(_deps: CommandAppDeps, _kit: SignInKit): Router<HttpState> {
  return new Router<HttpState>();
}
