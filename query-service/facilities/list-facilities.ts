// GET /api/v1/org/facilities: the organization's facilities, active or not, by id.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { READ_MODELS, type FacilityRow } from '../../shared/db/read-models.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { requireScope } from '../../shared/auth/scope-guard.js';
import { requirePrincipal } from '../../shared/auth/principal.js';
import { NO_QUERY_PARAMETERS, validateQuery } from '../../shared/http/schema-validation.js';

export interface FacilityItem {
  id: number;
  name: string;
  description: string | null;
  is_active: boolean;
  suspended: boolean;
  /** IANA time zone of the facility's local times (UTC when unset). */
  time_zone: string;
}

export async function listFacilities(db: Knex, orgId: number): Promise<FacilityItem[]> {
  const rows = await db<FacilityRow>(READ_MODELS.facilities)
    .where({ org_id: orgId })
    .orderBy('facility_id')
    .select('facility_id', 'name', 'description', 'is_active', 'suspended', 'time_zone');
  return rows.map((r) => ({
    id: Number(r.facility_id),
    name: r.name,
    description: r.description,
    is_active: r.is_active,
    suspended: r.suspended,
    time_zone: r.time_zone,
  }));
}

export function listFacilitiesRoute(router: Router<HttpState>, deps: { db: Knex; authenticate: HttpMiddleware }): void {
  router.get('/facilities', deps.authenticate, requireScope('org:facilities:read'), validateQuery(NO_QUERY_PARAMETERS), async (ctx) => {
    ctx.body = { success: true, facilities: await listFacilities(deps.db, requirePrincipal(ctx.state).orgId) };
  });
}
