// Mounts a sign-in method's router on a Koa app of its own (the service's middleware front, the
// stack's ports) behind a server listening on an ephemeral port, with a SignInKit test double:
// the passkey and federated routes driven over HTTP without the password sign-in pages.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Router from '@koa/router';
import { createServiceApp } from '../../../../shared/http/service-app.js';
import type { HttpState } from '../../../../shared/http/http-state.js';
import type { OAuthServices } from '../../../../shared/oauth/oauth-services.js';
import type { CommandAppDeps } from '../../../../command-service/command-app-deps.js';
import type { Stack } from '../../../support/stack.js';
import type { SignInKit } from '../../../../command-service/sign-in/sign-in-kit.js';

export interface MethodApp {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * `oauth` gets this server's base URL first (to be the issuer, when the test needs redirects
 * to come back here), and returns the OAuth services the routes see.
 */
export async function serveMethod(
  stack: Stack,
  kit: SignInKit,
  routes: (deps: CommandAppDeps, kit: SignInKit) => Router<HttpState>,
  oauth: (baseUrl: string) => Promise<OAuthServices> | OAuthServices = () => stack.oauth,
): Promise<MethodApp> {
  const server = http.createServer();
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deps: CommandAppDeps = { ...stack.deps, logger: stack.logger, config: { trustProxy: false }, oauth: await oauth(baseUrl) };
  const app = createServiceApp({ logger: stack.logger, trustProxy: false });
  app.use(routes(deps, kit).routes());
  server.on('request', app.callback());
  return {
    baseUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
