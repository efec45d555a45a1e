// The browser-facing side of the authorization server: authorize, sign-in, consent and logout.
import Router from '@koa/router';
import type { HttpState } from '../../shared/http/http-state.js';
import type { CommandAppDeps } from '../app.js';

export function signInRoutes(_deps: CommandAppDeps, _options: { trustProxy: boolean }): Router<HttpState> {
  return new Router<HttpState>();
}
