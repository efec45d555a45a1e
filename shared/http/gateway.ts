// The embedded gateway: one port in front of both HTTP apps, routing as the production reverse
// proxy does (see ARCHITECTURE.md): reads of the resource API (GET and HEAD of /api/v1/*) and
// UserInfo go to the query service; every write, the OAuth protocol endpoints and discovery go
// to the command service.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type Koa from 'koa';

type KoaApp = Pick<Koa, 'callback'>;

export function routesToQueryService(method: string | undefined, url: string | undefined): boolean {
  const path = (url ?? '/').split('?', 1)[0] ?? '/';
  if (path === '/api/oauth/userinfo') return true;
  return (method === 'GET' || method === 'HEAD') && (path === '/api/v1' || path.startsWith('/api/v1/'));
}

export function mountGateway(commandApp: KoaApp, queryApp: KoaApp): RequestListener {
  const command = commandApp.callback();
  const query = queryApp.callback();
  return (req: IncomingMessage, res: ServerResponse) => {
    void (routesToQueryService(req.method, req.url) ? query : command)(req, res);
  };
}
