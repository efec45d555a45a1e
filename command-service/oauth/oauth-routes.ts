// The OAuth protocol endpoints of the command service: discovery, JWKS, token, introspect, revoke.
import Router from '@koa/router';
import type { HttpState } from '../../shared/http/http-state.js';
import type { CommandAppDeps } from '../app.js';

export function oauthProtocolRoutes(_deps: CommandAppDeps, _options: { trustProxy: boolean }): Router<HttpState> {
  return new Router<HttpState>();
}
