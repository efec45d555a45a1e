// POST /api/v1/passes and DELETE /api/v1/passes/{public_id}: the user-delegated writes.
import Router from '@koa/router';
import type { HttpState } from '../../shared/http/http-state.js';
import type { CommandAppDeps } from '../app.js';

export function userPassRoutes(_deps: CommandAppDeps, _options: { trustProxy: boolean }): Router<HttpState> {
  return new Router<HttpState>();
}
