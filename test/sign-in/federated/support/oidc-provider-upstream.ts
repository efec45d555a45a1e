// An upstream OpenID Provider for federated sign-in tests that is not this service: oidc-provider
// (npm), in-process on 127.0.0.1 with a random port, so a mistake shared by both sides of the
// existing e2e suite (this service as its own upstream) cannot hide here.
//
// Its accounts are the test's: `account(claims)` adds one whose email claims are exactly what the
// test says (`email_verified` true, false, a string, or absent). The sign-in and consent pages
// are replaced by one programmatic interaction endpoint, using oidc-provider's own interaction
// API (interactionDetails and interactionFinished), so the browser side is plain HTTP hops:
//
//   GET  /auth?...               302 /interaction/{uid}        (oidc-provider)
//   POST /interaction/{uid}      303 /auth/{uid}               login as `account` (this file)
//   GET  /auth/{uid}             302 /interaction/{uid'}       consent prompt     (oidc-provider)
//   POST /interaction/{uid'}     303 /auth/{uid'}              grant what it asks (this file)
//   GET  /auth/{uid'}            302 {redirect_uri}?code=...   (oidc-provider)
//
// With `claimsInIdToken` false (oidc-provider's default, conformIdTokenClaims) the email claims
// reach the relying party through userinfo only; with true they are in the id_token as well.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import { Browser } from '../../support/browser.js';

export interface UpstreamAccountClaims {
  readonly email: string;
  /** Sent as given; absent when the property is absent. */
  readonly email_verified?: unknown;
}

export interface OidcProviderUpstream {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Registers the downstream's callback and builds the provider; before the first sign-in. */
  register(redirectUri: string): Promise<void>;
  /** A new upstream account (its subject) with exactly these email claims. */
  account(claims: UpstreamAccountClaims): string;
  /** How many userinfo requests the upstream has answered. */
  userInfoRequests(): number;
  /** Signs `subject` in at the upstream from its authorize URL; returns where it sends the browser back. */
  signIn(authorizeUrl: string, subject: string): Promise<string>;
  close(): Promise<void>;
}

/** The part of oidc-provider's interaction API used here (its package ships no types). */
interface InteractionApi {
  interactionDetails(req: http.IncomingMessage, res: http.ServerResponse): Promise<{
    readonly prompt: { readonly name: string; readonly details: Record<string, unknown> };
    readonly params: Record<string, unknown>;
    readonly session?: { readonly accountId?: string };
    readonly grantId?: string;
  }>;
  interactionFinished(req: http.IncomingMessage, res: http.ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  readonly Grant: {
    new (fields: { accountId: string; clientId: string }): GrantApi;
    find(id: string): Promise<GrantApi | undefined>;
  };
}

interface GrantApi {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: readonly string[]): void;
  save(): Promise<string>;
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startOidcProviderUpstream(options: { readonly claimsInIdToken?: boolean } = {}): Promise<OidcProviderUpstream> {
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `downstream-${randomUUID()}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const accounts = new Map<string, UpstreamAccountClaims>();
  let userInfoRequests = 0;

  async function interaction(provider: InteractionApi, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      const subject = (await readForm(req)).get('account') ?? '';
      if (!accounts.has(subject)) {
        res.writeHead(400).end('unknown account');
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: subject } }, { mergeWithLastSubmission: false });
      return;
    }
    if (details.prompt.name === 'consent') {
      const accountId = details.session?.accountId;
      if (!accountId) throw new Error('consent without a session');
      const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
      if (!grant) throw new Error('the interaction names a grant that is gone');
      const missingScope = details.prompt.details.missingOIDCScope as string[] | undefined;
      const missingClaims = details.prompt.details.missingOIDCClaims as string[] | undefined;
      if (missingScope) grant.addOIDCScope(missingScope.join(' '));
      if (missingClaims) grant.addOIDCClaims(missingClaims);
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
      return;
    }
    throw new Error(`unexpected prompt ${details.prompt.name}`);
  }

  async function register(redirectUri: string): Promise<void> {
    const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
    // Its default in-memory storage, named so that it does not warn about it.
    const store = new LRU({ maxSize: 10_000 });
    const provider = new Provider(issuer, {
      adapter: (model: string) => new MemoryAdapter(model, store),
      jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'upstream-rs256', alg: 'RS256', use: 'sig' }] },
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          token_endpoint_auth_method: 'client_secret_basic',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          id_token_signed_response_alg: 'RS256',
        },
      ],
      scopes: ['openid', 'email'],
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      conformIdTokenClaims: !options.claimsInIdToken,
      findAccount: async (_ctx: unknown, sub: string) => {
        const claims = accounts.get(sub);
        return claims ? { accountId: sub, claims: async () => ({ sub, ...claims }) } : undefined;
      },
      interactions: { url: (_ctx: unknown, i: { uid: string }) => `/interaction/${i.uid}` },
      pkce: { required: () => true },
      ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
      cookies: { keys: [randomBytes(32).toString('base64url')] },
      features: { devInteractions: { enabled: false } },
    });
    const api = provider as unknown as InteractionApi;
    const callback = provider.callback();
    handler = (req, res) => {
      if (req.method === 'POST' && req.url?.startsWith('/interaction/')) {
        interaction(api, req, res).catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(500).end(String(error));
        });
        return;
      }
      if (req.url?.startsWith('/me')) userInfoRequests += 1;
      callback(req, res);
    };
  }

  async function signIn(authorizeUrl: string, subject: string): Promise<string> {
    const browser = new Browser(issuer);
    let location = authorizeUrl;
    for (let hop = 0; hop < 10; hop++) {
      const url = new URL(location, issuer);
      if (url.origin !== issuer) return url.href;
      const res = url.pathname.startsWith('/interaction/')
        ? await browser.post(url.pathname, { account: subject })
        : await browser.get(url.href);
      if (res.status < 300 || res.status >= 400 || !res.location) {
        throw new Error(`unexpected answer ${res.status} at the upstream ${url.pathname}: ${res.text.slice(0, 300)}`);
      }
      location = res.location;
    }
    throw new Error('too many hops at the upstream');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    register,
    account(claims) {
      const subject = `acct-${randomUUID()}`;
      accounts.set(subject, claims);
      return subject;
    },
    userInfoRequests: () => userInfoRequests,
    signIn,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
