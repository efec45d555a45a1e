// 403 `insufficient_scope` (with a challenge naming the scope) when the credential lacks a scope.
import { InsufficientScopeError, InvalidTokenError } from '../errors.js';
import type { HttpMiddleware } from '../http/http-state.js';

export function requireScope(scope: string): HttpMiddleware {
  return async function scopeGuard(ctx, next) {
    const principal = ctx.state.principal;
    if (!principal) throw new InvalidTokenError();
    if (!principal.scopes.includes(scope)) throw new InsufficientScopeError(scope);
    await next();
  };
}
