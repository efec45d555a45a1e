// A SignInKit test double: what the sign-in flow gives the passkey and federated routes, with
// sessions and a CSRF token kept in memory, so those routes can be driven over HTTP on their own.
// complete() records the sign-in, sets a session cookie and redirects to /signed-in.
import { randomBytes } from 'node:crypto';
import type { AuthenticationMethod } from '../../../../shared/oauth/oauth-events.js';
import type { SignInSession } from '../../../../shared/oauth/authorize-interaction.js';
import type { HttpContext } from '../../../../shared/http/http-state.js';
import { CsrfTokenRejected } from '../../../../shared/sign-in/csrf.js';
import type { SignInKit } from '../../../../command-service/sign-in/sign-in-kit.js';

export const TEST_SESSION_COOKIE = 'test_session';
export const SIGNED_IN_LOCATION = '/signed-in';

export class TestSignInKit implements SignInKit {
  readonly csrf = randomBytes(16).toString('base64url');
  readonly completed: Array<{ userId: number; orgId: number; amr: AuthenticationMethod[] }> = [];
  private readonly sessions = new Map<string, SignInSession>();

  /** A session as if the user had signed in with a password; returns the cookie to send. */
  startSession(user: { userId: number; orgId: number }): string {
    const token = randomBytes(16).toString('base64url');
    this.sessions.set(token, { ...user, amr: ['pwd'], authTime: new Date().toISOString(), sid: token });
    return `${TEST_SESSION_COOKIE}=${token}`;
  }

  sessionByCookie(token: string): SignInSession | null {
    return this.sessions.get(token) ?? null;
  }

  async complete(ctx: HttpContext, user: { readonly userId: number; readonly orgId: number }, amr: readonly AuthenticationMethod[]): Promise<void> {
    this.completed.push({ userId: user.userId, orgId: user.orgId, amr: [...amr] });
    const token = randomBytes(16).toString('base64url');
    this.sessions.set(token, { userId: user.userId, orgId: user.orgId, amr: [...amr], authTime: new Date().toISOString(), sid: token });
    ctx.append('Set-Cookie', `${TEST_SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax`);
    ctx.status = 302;
    ctx.set('Location', SIGNED_IN_LOCATION);
    ctx.body = '';
  }

  checkCsrf(ctx: HttpContext): void {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    const presented = typeof body?.csrf === 'string' ? body.csrf : ctx.get('X-CSRF-Token');
    if (presented !== this.csrf) throw new CsrfTokenRejected();
  }

  csrfToken(): string {
    return this.csrf;
  }

  async session(ctx: HttpContext): Promise<SignInSession | null> {
    const token = ctx.cookies.get(TEST_SESSION_COOKIE);
    return token ? this.sessionByCookie(token) : null;
  }
}
