// Helpers of the protocol end-to-end suites: the stack each suite starts, issue codes as the
// authorize endpoint would (the sign-in pages are built elsewhere), and talk form-encoded to the
// protocol endpoints.
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { requester, startStack, type ApiResponse, type Stack } from '../../support/stack.js';
import { createServiceApp } from '../../../shared/http/service-app.js';
import type { RateLimitPolicy } from '../../../shared/http/rate-limit.js';
import type { OAuthServices } from '../../../shared/oauth/oauth-services.js';
import type { RegisterClientInput } from '../../../command-service/oauth-clients/register-client.js';
import { oauthProtocolRoutes } from '../../../command-service/oauth/oauth-routes.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import type { AuthorizeRequest } from '../../../shared/oauth/authorize-request.js';
import type { SignInSession } from '../../../shared/oauth/authorize-interaction.js';
import type { AuthenticationMethod } from '../../../shared/oauth/oauth-events.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { s256Challenge } from '../../../shared/oauth/pkce.js';
import { sha256Hex } from '../../../shared/oauth/opaque-credentials.js';
import type { OAuthScope } from '../../../shared/oauth/scopes.js';
import { tokenFamilyDecider, type TokenFamilyState } from '../../../shared/oauth/token-family-decider.js';
import { issueAuthorizationCode } from '../../../command-service/oauth/issue-code.js';

export type FormFields = Record<string, string> | ReadonlyArray<readonly [string, string]>;

export interface TestClient {
  readonly clientId: string;
  readonly clientSecret: string | null;
  readonly redirectUri: string;
}

export interface TestUser {
  readonly userId: number;
  readonly orgId: number;
}

export interface IssuedCode {
  readonly code: string;
  readonly verifier: string;
  readonly redirectUri: string;
  readonly session: SignInSession;
}

/** Two public apps and a confidential backend: enough for a client's own tokens and another's. */
export const APPS_AND_BACKEND = {
  app: {},
  otherApp: { name: 'Other App' },
  backend: { clientType: 'confidential' },
} as const satisfies Record<string, Partial<RegisterClientInput>>;

/**
 * A stack with one organization, one user of it, and the named clients of that organization,
 * registered in the order given. The stack is stopped again when seeding fails.
 */
export async function startProtocolStack<Name extends string>(
  label: string,
  clients: Record<Name, Partial<RegisterClientInput>>,
): Promise<{ stack: Stack; user: TestUser; clients: Record<Name, TestClient> }> {
  const stack = await startStack({ label });
  try {
    const { orgId } = await stack.seed.tenant();
    const { userId } = await stack.seed.user(orgId);
    const seeded = {} as Record<Name, TestClient>;
    for (const [name, options] of Object.entries(clients) as Array<[Name, Partial<RegisterClientInput>]>) {
      seeded[name] = await stack.seed.client(orgId, options);
    }
    return { stack, user: { userId, orgId }, clients: seeded };
  } catch (error) {
    await stack.stop();
    throw error;
  }
}

export interface ProtocolServer {
  readonly request: ReturnType<typeof requester>;
  close(): Promise<void>;
}

/**
 * The protocol routes alone on a server of their own, over the stack's deps: for a rate limit
 * or a failing dependency the shared stack must not have.
 */
export async function serveProtocolRoutes(
  stack: Stack,
  options: { trustProxy: boolean; failureLimit?: Partial<RateLimitPolicy>; clientRequestsPerSecond?: number; oauth?: Partial<OAuthServices> },
): Promise<ProtocolServer> {
  const koa = createServiceApp({ logger: stack.logger, trustProxy: options.trustProxy });
  const deps = { ...stack.deps, logger: stack.logger, config: { trustProxy: options.trustProxy }, oauth: { ...stack.oauth, ...options.oauth } };
  koa.use(oauthProtocolRoutes(deps, { trustProxy: options.trustProxy, failureLimit: options.failureLimit, clientRequestsPerSecond: options.clientRequestsPerSecond }).routes());
  const server = http.createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    request: requester(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function newVerifier(): string {
  return randomBytes(48).toString('base64url'); // 64 characters of the RFC 7636 alphabet
}

export function newSid(): string {
  return `sid_${randomBytes(12).toString('base64url')}`;
}

/** Issues a code through issueAuthorizationCode, with a hand-built authorize request and session. */
export async function issueCode(
  stack: Stack,
  client: TestClient,
  user: TestUser,
  options: {
    scopes?: readonly OAuthScope[];
    nonce?: string | null;
    amr?: readonly AuthenticationMethod[];
    authTime?: Date;
    /** The time of issue (ctx.now): in the past to get an expired code. */
    now?: Date;
    /** The PKCE verifier whose challenge the request carries (default: a fresh random one). */
    verifier?: string;
  } = {},
): Promise<IssuedCode> {
  const registered = await stack.oauth.clients.findClient(client.clientId);
  if (!registered) throw new Error(`client ${client.clientId} is not in the read model`);
  const verifier = options.verifier ?? newVerifier();
  const now = options.now ?? new Date();
  const request: AuthorizeRequest = {
    client: registered,
    redirectUri: client.redirectUri,
    scopes: options.scopes ?? ['openid', 'profile', 'offline_access'],
    state: 'xyz',
    codeChallenge: s256Challenge(verifier),
    codeChallengeMethod: 'S256',
    nonce: options.nonce === undefined ? 'n-0S6_WzA2Mj' : options.nonce,
    prompt: new Set(),
    maxAge: null,
    loginHint: null,
    idTokenHint: null,
  };
  const session: SignInSession = {
    userId: user.userId,
    orgId: user.orgId,
    authTime: (options.authTime ?? new Date(now.getTime() - 5_000)).toISOString(),
    amr: options.amr ?? ['pwd', 'otp', 'mfa'],
    sid: newSid(),
  };
  const ctx: CommandContext = { correlationId: randomUUID(), causationId: null, actor: { kind: 'user', id: user.userId }, now };
  const { code } = await issueAuthorizationCode(stack.deps, { request, session }, ctx);
  return { code, verifier, redirectUri: client.redirectUri, session };
}

export function formBody(fields: FormFields): string {
  const pairs = Array.isArray(fields) ? fields : Object.entries(fields);
  return new URLSearchParams(pairs as Array<[string, string]>).toString();
}

export function postForm(stack: Stack, path: string, fields: FormFields, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return stack.request('POST', path, {
    raw: formBody(fields),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
  });
}

export function basic(clientId: string, secret: string): Record<string, string> {
  const encode = (s: string) => encodeURIComponent(s);
  return { Authorization: `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}` };
}

/** The code exchange of a public client (client_id in the body), or of a confidential one with client_secret_post. */
export function exchange(stack: Stack, client: TestClient, issued: IssuedCode, overrides: Record<string, string> = {}): Promise<ApiResponse> {
  const fields: Record<string, string> = {
    grant_type: 'authorization_code',
    code: issued.code,
    redirect_uri: issued.redirectUri,
    code_verifier: issued.verifier,
    client_id: client.clientId,
    ...(client.clientSecret !== null ? { client_secret: client.clientSecret } : {}),
    ...overrides,
  };
  return postForm(stack, '/api/oauth/token', fields);
}

/** The code exchange of a confidential client with client_secret_basic (default: its own secret). */
export function basicExchange(stack: Stack, client: TestClient, issued: IssuedCode, secret = client.clientSecret): Promise<ApiResponse> {
  if (secret === null) throw new Error('client_secret_basic needs a confidential client');
  return postForm(
    stack,
    '/api/oauth/token',
    { grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.redirectUri, code_verifier: issued.verifier },
    basic(client.clientId, secret),
  );
}

export function refresh(stack: Stack, client: TestClient, refreshToken: string, overrides: Record<string, string> = {}): Promise<ApiResponse> {
  return postForm(stack, '/api/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.clientId,
    ...(client.clientSecret !== null ? { client_secret: client.clientSecret } : {}),
    ...overrides,
  });
}

export function introspect(stack: Stack, client: TestClient, token: string): Promise<ApiResponse> {
  if (client.clientSecret === null) throw new Error('introspection needs a confidential client');
  return postForm(stack, '/api/oauth/introspect', { token }, basic(client.clientId, client.clientSecret));
}

export function revoke(stack: Stack, client: TestClient, token: string): Promise<ApiResponse> {
  return postForm(stack, '/api/oauth/revoke', {
    token,
    client_id: client.clientId,
    ...(client.clientSecret !== null ? { client_secret: client.clientSecret } : {}),
  });
}

/** A successful exchange: 200 with tokens. */
export async function tokensFor(stack: Stack, client: TestClient, user: TestUser, scopes?: readonly OAuthScope[]) {
  const issued = await issueCode(stack, client, user, { scopes });
  const res = await exchange(stack, client, issued);
  expect(res.status, res.text).to.equal(200);
  return { issued, tokens: res.body as { access_token: string; refresh_token?: string; id_token?: string; scope: string; expires_in: number } };
}

export function familyIdOf(accessToken: string): string {
  const familyId = decodeJwt(accessToken).family_id;
  if (typeof familyId !== 'string') throw new Error('access token without family_id');
  return familyId;
}

/** The token family a code opens, from the code's own stream. */
export async function familyIdOfCode(stack: Stack, code: string): Promise<string> {
  const [issued] = await stack.store.readStream(oauthStreams.authorizationCode(sha256Hex(code)));
  const familyId = (issued?.data as { familyId?: unknown } | undefined)?.familyId;
  if (typeof familyId !== 'string') throw new Error('no such code');
  return familyId;
}

/** The family's state straight from its stream (the event log, not a cache or read model). */
export async function familyState(stack: Stack, familyId: string): Promise<TokenFamilyState> {
  const events = await stack.store.readStream(oauthStreams.tokenFamily(familyId));
  let state = tokenFamilyDecider.initialState();
  for (const e of events) state = tokenFamilyDecider.evolve(state, { type: e.type, data: e.data } as never);
  return state;
}

export function expectOAuthError(res: ApiResponse, status: number, error: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.have.keys(['error', 'error_description']);
  expect(res.body.error).to.equal(error);
  expect(res.headers.get('cache-control')).to.equal('no-store');
}
