// GET /.well-known/audit-keys.json: the public keys that sign the audit tree heads (every one ever
// used, the current first), for `guestpass audit verify --keys URL`. Its own set, apart from the
// OAuth JWKS: no token verifier ever sees these keys.
import type { Knex } from 'knex';
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import type { HttpState } from '../../shared/http/http-state.js';
import { auditKeySet } from '../../shared/audit/audit-keys.js';
import { publicDocumentHeaders } from '../oauth/protocol-headers.js';

export const AUDIT_KEYS_PATH = '/.well-known/audit-keys.json';

export function auditKeysRoute(db: Knex): Router<HttpState> {
  const router = serviceRouter();
  router.get(AUDIT_KEYS_PATH, publicDocumentHeaders(60), async (ctx) => {
    ctx.body = await auditKeySet(db);
  });
  return router;
}
