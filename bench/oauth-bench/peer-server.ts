// The peer, oidc-provider (npm), in a child process of bench/oauth-vs-oidc-provider.ts, set up for
// the features the guest-pass service has:
//   * authorization code flow with PKCE S256 required for every client (also the confidential one);
//   * refresh tokens for offline_access, rotated on every use (rotateRefreshToken: true);
//   * RS256 everywhere: one 2048-bit RSA key signs id_tokens and JWT access tokens
//     (resource indicators: every grant has the one resource `${issuer}/api`, whose access tokens
//     are RS256 JWTs, typ at+jwt, 900 s, as ours);
//   * introspection for the confidential client (client_secret_basic);
//   * openid + offline_access, one user, an id_token (RS256, 1 h) with every token response.
// Storage, one of two:
//   * in memory: oidc-provider's own adapter (MemoryAdapter over its LRU store), with the store's
//     capacity raised from 1,000 entries to 10,000,000 so that the codes made before a phase are
//     not evicted before they are redeemed. Nothing is written to disk.
//   * durable (PEER_REDIS_URL set), as it runs in production: redis-adapter.ts over the Redis the
//     bench starts for it with `appendfsync always` (every write on disk before it is answered).
//
// One difference cannot be configured away: oidc-provider refuses to introspect JWT access tokens
// ("Structured JWT Tokens cannot be introspected", unsupported_token_type). So the access tokens
// of the confidential client, the ones the introspection phase introspects, are opaque at the peer
// (an in-memory lookup, no signature to verify), and JWTs at ours. The token phases use the public
// client, whose access tokens are JWTs at both.
//
// Codes are made as its authorization endpoint makes them after sign-in and consent: a Grant
// with the scopes and resource, then an AuthorizationCode bound to it (PKCE challenge, redirect
// URI, nonce, sid, auth_time, amr).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import { s256Challenge } from '../../shared/oauth/pkce.js';
import { inParallel, newSid, newVerifier, type BenchClient, type ClientKind, type IssuedCode, type ServerInfo } from './protocol.js';
import { serveRpc } from './rpc.js';
import { Redis } from 'ioredis';
import { redisAdapterFactory } from './redis-adapter.js';

/** The durable peer's Redis (started by the bench with appendfsync always); unset: in memory. */
const REDIS_URL = process.env.PEER_REDIS_URL?.trim() || null;
let redis: Redis | null = null;

const REDIRECT_URI = 'https://bench.example.test/callback';
const SCOPE = 'openid offline_access';
const ACCOUNT_ID = 'bench-user';
const STORE_CAPACITY = 10_000_000;

let provider: Provider | null = null;
let server: http.Server | null = null;
let resource = '';
const clients: Record<ClientKind, BenchClient> = {
  public: { clientId: 'bench-public', clientSecret: null, redirectUri: REDIRECT_URI },
  confidential: { clientId: 'bench-confidential', clientSecret: randomBytes(32).toString('base64url'), redirectUri: REDIRECT_URI },
};

async function signingKeys(): Promise<{ keys: Record<string, unknown>[] }> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  return { keys: [{ ...jwk, kid: 'bench-rs256', alg: 'RS256', use: 'sig' }] };
}

serveRpc({
  async start(): Promise<ServerInfo> {
    // Listen first: the issuer is the listener's own address.
    let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
    server = http.createServer((req, res) => handler(req, res));
    server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    resource = `${issuer}/api`;
    const store = new LRU({ maxSize: STORE_CAPACITY });
    if (REDIS_URL !== null) redis = new Redis(REDIS_URL);
    const clientMetadata = {
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: SCOPE,
      id_token_signed_response_alg: 'RS256',
    };

    provider = new Provider(issuer, {
      adapter: redis !== null ? redisAdapterFactory(redis) : (model: string) => new MemoryAdapter(model, store),
      jwks: await signingKeys(),
      clients: [
        { ...clientMetadata, client_id: clients.public.clientId, token_endpoint_auth_method: 'none' },
        {
          ...clientMetadata,
          client_id: clients.confidential.clientId,
          client_secret: clients.confidential.clientSecret,
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      scopes: SCOPE.split(' '),
      claims: { openid: ['sub'] },
      findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
      pkce: { required: () => true },
      rotateRefreshToken: true,
      ttl: { AccessToken: 900, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 30 * 24 * 3600, Grant: 30 * 24 * 3600 },
      cookies: { keys: [randomBytes(32).toString('base64url')] },
      features: {
        devInteractions: { enabled: false },
        introspection: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx: unknown, _resource: string, client: { clientId: string }) => ({
            scope: SCOPE,
            audience: resource,
            accessTokenTTL: 900,
            // Opaque only where the peer could not introspect a JWT (see the head of this file).
            accessTokenFormat: client.clientId === clients.confidential.clientId ? 'opaque' : 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
    });
    const callback = provider.callback();
    handler = callback;
    return {
      name: redis !== null ? 'peer durable' : 'peer in memory',
      baseUrl: issuer,
      tokenPath: '/token',
      introspectPath: '/token/introspection',
      clients,
      storage: redis !== null ? 'Redis adapter (redis-adapter.ts), appendfsync always: every write fsync\'d before it is answered' : 'in memory (its MemoryAdapter), nothing written to disk',
      introspects: `opaque access tokens (a lookup ${redis !== null ? 'in Redis' : 'in memory'}: it refuses to introspect JWT access tokens)`,
      introspectionVerifies: false,
      pid: process.pid,
      limits: 'none (oidc-provider has no rate limits of its own)',
    };
  },

  async createCodes({ client: kind, count }: { client: ClientKind; count: number }): Promise<IssuedCode[]> {
    const p = provider!;
    const client = await p.Client.find(clients[kind].clientId);
    if (!client) throw new Error(`client ${clients[kind].clientId} is not registered`);
    const authTime = Math.floor(Date.now() / 1000);
    return inParallel(count, 1, async () => {
      const grant = new p.Grant({ accountId: ACCOUNT_ID, clientId: client.clientId });
      grant.addOIDCScope(SCOPE);
      grant.addResourceScope(resource, SCOPE);
      const grantId = await grant.save();
      const verifier = newVerifier();
      const code = await new p.AuthorizationCode({
        accountId: ACCOUNT_ID,
        client,
        grantId,
        scope: SCOPE,
        resource,
        redirectUri: REDIRECT_URI,
        codeChallenge: s256Challenge(verifier),
        codeChallengeMethod: 'S256',
        nonce: newSid(),
        sid: newSid(),
        authTime,
        amr: ['pwd'],
      }).save();
      return { code, verifier };
    });
  },

  async settle(): Promise<void> {},

  async cpu(): Promise<number> {
    const { user, system } = process.cpuUsage();
    return user + system;
  },

  async postgresPids(): Promise<number[]> {
    return [];
  },

  async stop(): Promise<void> {
    redis?.disconnect();
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    setImmediate(() => process.exit(0));
  },
});
