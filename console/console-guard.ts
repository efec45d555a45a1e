// The console's guards, composed in the order a request meets them:
//
//   errors    DomainErrors become console pages (404, 403, 409, 429), never JSON
//   form      POST only: the forms' rate limit, the body (urlencoded), then the CSRF token
//   session   the sign-in session (the /account cookie); none: to /signin, then back here
//   role      the user's roles as the users read model has them NOW: a role taken away closes
//             its pages at once (403 page)
//
// A secret-handing or destructive action also calls requireRecentSignIn() (10 minutes, as
// /account's authenticator changes do).
import type { Role } from '../shared/domain/events.js';
import { READ_MODELS, type UserRow } from '../shared/db/read-models.js';
import { DomainError, NotFoundError, RateLimitedError } from '../shared/errors.js';
import type { HttpContext, HttpMiddleware } from '../shared/http/http-state.js';
import { authenticatedRecently } from '../shared/sign-in/session-decider.js';
import { CsrfTokenRejected } from '../shared/sign-in/csrf.js';
import type { SafeHtml } from '../shared/sign-in/html.js';
import { readFormFields, type FormFields } from '../command-service/sign-in/page-form.js';
import { redirectTo, sendPage } from '../command-service/sign-in/page-response.js';
import { SIGN_IN_PATHS } from '../command-service/sign-in/sign-in-paths.js';
import type { ConsoleEnv } from './console-env.js';
import { consoleUser, setConsoleUser, type ConsoleUser } from './console-user.js';
import { confirmPage, forbiddenPage, messagePage, notFoundPage, signInAgainPage, type ConfirmInput } from './pages/common-pages.js';

const forms = new WeakMap<HttpContext, FormFields>();

/** The posted form (read and CSRF-checked by the guard). */
export function postedForm(ctx: HttpContext): FormFields {
  return forms.get(ctx) ?? {};
}

/** Sends a console page: never cached, never framed, only our own script and style (page-response.ts). */
export function sendConsolePage(ctx: HttpContext, page: SafeHtml, status = 200): void {
  sendPage(ctx, page, status);
}

/**
 * The confirmation page of a destructive action, for the signed-in user: its form posts back to
 * the path it was asked at (unless `action` names another), "Go back" leads to `current`'s list
 * (unless `backHref` names another).
 */
export function sendConfirmPage(
  env: ConsoleEnv,
  ctx: HttpContext,
  page: Omit<ConfirmInput, 'user' | 'csrfToken' | 'action' | 'backHref'> & Partial<Pick<ConfirmInput, 'action' | 'backHref'>> & { readonly current: string },
): void {
  sendPage(
    ctx,
    confirmPage({ user: consoleUser(ctx), csrfToken: env.kit.csrfToken(ctx), action: ctx.path, backHref: page.current, ...page }),
  );
}

function userOrNull(ctx: HttpContext): ConsoleUser | null {
  try {
    return consoleUser(ctx);
  } catch {
    return null;
  }
}

function renderErrors(env: ConsoleEnv): HttpMiddleware {
  return async function consoleErrors(ctx, next) {
    try {
      await next();
    } catch (error) {
      if (!(error instanceof DomainError) || ctx.headerSent) throw error;
      const base = { user: userOrNull(ctx), csrfToken: env.kit.csrfToken(ctx) };
      if (error instanceof NotFoundError) return sendConsolePage(ctx, notFoundPage(base), 404);
      if (error instanceof CsrfTokenRejected) {
        return sendConsolePage(ctx, messagePage({ ...base, title: 'This form has expired', message: 'Go back, reload the page and try again.' }), 403);
      }
      if (error instanceof RateLimitedError) {
        ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
        return sendConsolePage(ctx, messagePage({ ...base, title: 'Too many requests', message: 'Wait a minute, then try again.' }), 429);
      }
      // A business rule refused the change (409, 400, 402): its message says which.
      sendConsolePage(ctx, messagePage({ ...base, title: 'That could not be done', message: capitalise(error.message) }), error.status);
    }
  };
}

export function capitalise(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}

function readForm(env: ConsoleEnv, ownBody: boolean): HttpMiddleware {
  const limit = env.forms.middleware({ trustProxy: env.trustProxy });
  return async function consoleForm(ctx, next) {
    if (ctx.method !== 'POST') return next();
    // A file upload reads its own (multipart) body and checks the CSRF token in it (checkUploadCsrf).
    if (ownBody) return limit(ctx, next);
    await limit(ctx, async () => {
      const fields = await readFormFields(ctx);
      ctx.request.body = fields;
      forms.set(ctx, fields);
      env.kit.checkCsrf(ctx);
      await next();
    });
  };
}

async function loadUser(env: ConsoleEnv, ctx: HttpContext): Promise<ConsoleUser | null> {
  const session = await env.kit.session(ctx);
  if (session === null) return null;
  const row = await env.deps
    .db<UserRow>(READ_MODELS.users)
    .first('user_id', 'org_id', 'email', 'first_name', 'last_name', 'roles')
    .where({ user_id: session.userId });
  if (row === undefined) return null;
  return {
    userId: row.user_id,
    orgId: row.org_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    roles: row.roles as Role[],
    recentSignIn: authenticatedRecently(session, new Date()),
  };
}

function signedIn(env: ConsoleEnv): HttpMiddleware {
  return async function consoleSession(ctx, next) {
    const user = await loadUser(env, ctx);
    if (user === null) {
      // Back to this page after signing in; a form post comes back to the page it was on.
      if (ctx.method === 'GET') env.kit.returnAfterSignIn(ctx, ctx.originalUrl);
      return redirectTo(ctx, SIGN_IN_PATHS.signIn);
    }
    setConsoleUser(ctx, user);
    await next();
  };
}

function roleCheck(env: ConsoleEnv, role: Role | null): HttpMiddleware {
  return async function consoleRole(ctx, next) {
    const user = consoleUser(ctx);
    if (role !== null && !user.roles.includes(role)) {
      return sendConsolePage(ctx, forbiddenPage({ user, csrfToken: env.kit.csrfToken(ctx) }), 403);
    }
    await next();
  };
}

/**
 * The middleware before a console route's handler: `role` null means any signed-in user.
 * `ownBody`: the handler reads the POST body itself (a file upload) and must call checkUploadCsrf.
 */
export function guard(env: ConsoleEnv, role: Role | null, options: { readonly ownBody?: boolean } = {}): HttpMiddleware[] {
  return [renderErrors(env), readForm(env, options.ownBody === true), signedIn(env), roleCheck(env, role)];
}

/** The CSRF check of a form the handler read itself (guard's `ownBody`): `fields` holds its `csrf`. */
export function checkUploadCsrf(env: ConsoleEnv, ctx: HttpContext, fields: FormFields): void {
  ctx.request.body = fields;
  forms.set(ctx, fields);
  env.kit.checkCsrf(ctx);
}

/** The middleware of a console page that needs no sign-in (an invitation's emailed link): errors, and CSRF on POST. */
export function publicGuard(env: ConsoleEnv): HttpMiddleware[] {
  return [renderErrors(env), readForm(env, false)];
}

/**
 * True when the user signed in within the last 10 minutes. Otherwise sends the "sign in again"
 * page (coming back to `returnTo`, a GET page of the console) and returns false.
 */
export function requireRecentSignIn(env: ConsoleEnv, ctx: HttpContext, what: string, returnTo: string): boolean {
  const user = consoleUser(ctx);
  if (user.recentSignIn) return true;
  sendConsolePage(ctx, signInAgainPage({ user, csrfToken: env.kit.csrfToken(ctx), what, returnTo }), 403);
  return false;
}

/** A positive whole-number id from a route parameter; anything else is no such thing (404). */
export function idParam(value: string | undefined): number {
  if (value === undefined || !/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) throw new NotFoundError('not found');
  return Number(value);
}
