// /visitors (the front desk: admins): per facility, today's guests (the facility's day, in its
// time zone, as a new pass's arrival day is) from the
// front_desk_visits read model, which the door path's check-in and check-out events keep; and the
// "on site now" list for an evacuation. Another organization's facility is 404.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS, type FacilityRow, type FrontDeskVisitRow } from '../../shared/db/read-models.js';
import { NotFoundError } from '../../shared/errors.js';
import { wallClock } from '../../shared/domain/time-zone.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, idParam, sendConsolePage } from '../console-guard.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { guestName } from '../passes/passes-routes.js';
import { onSitePage, visitorsPage, type Visit, type VisitorsView } from './visitors-pages.js';

type VisitRow = Pick<FrontDeskVisitRow, 'first_name' | 'last_name' | 'arrival_date' | 'arrival_time' | 'checked_in_at' | 'checked_out_at'>;
const VISIT_COLUMNS = ['first_name', 'last_name', 'arrival_date', 'arrival_time', 'checked_in_at', 'checked_out_at'] as const;

interface DeskFacility {
  readonly facility_id: number;
  readonly name: string;
  /** IANA name ('UTC' when unset): the desk's day and its clock. */
  readonly time_zone: string;
}

/** A door time on the facility's clock (`HH:MM`). */
function clock(value: Date | string | null, zone: string): string | null {
  return value === null ? null : wallClock(zone, new Date(value)).time.slice(0, 5);
}

function visitOf(row: VisitRow, day: string, zone: string): Visit {
  return {
    name: guestName(row.first_name, row.last_name),
    arrival: row.arrival_date === day ? (row.arrival_time ?? 'Any time') : `${row.arrival_date} ${row.arrival_time ?? ''}`.trim(),
    checkedIn: clock(row.checked_in_at, zone),
    checkedOut: clock(row.checked_out_at, zone),
  };
}

/** A facility's guests of one day, in arrival order (front_desk_visits' facility_day index). */
export function dayVisitsQuery(db: Knex, orgId: number, facilityId: number, day: string): Knex.QueryBuilder {
  return db<FrontDeskVisitRow>(READ_MODELS.frontDeskVisits)
    .where({ org_id: orgId, facility_id: facilityId, arrival_date: day, cancelled: false })
    .orderByRaw('arrival_time NULLS FIRST, pass_id')
    .limit(5000)
    .select(VISIT_COLUMNS);
}

/** Who is on site at a facility now, whatever day they were expected (the on_site partial index). */
export function onSiteQuery(db: Knex, orgId: number, facilityId: number): Knex.QueryBuilder {
  return db<FrontDeskVisitRow>(READ_MODELS.frontDeskVisits)
    .where({ org_id: orgId, facility_id: facilityId })
    .whereNotNull('checked_in_at')
    .whereNull('checked_out_at')
    .orderBy('checked_in_at')
    .limit(5000)
    .select(VISIT_COLUMNS);
}

/** Today's lists at one facility: expected (not yet in), on site (in, not out), left. */
export async function visitorsView(db: Knex, orgId: number, facility: DeskFacility, now: Date): Promise<VisitorsView> {
  const zone = facility.time_zone;
  const { date: day, time } = wallClock(zone, now);
  // Two index ranges, read together.
  const [rows, onSite] = (await Promise.all([dayVisitsQuery(db, orgId, facility.facility_id, day), onSiteQuery(db, orgId, facility.facility_id)])) as [VisitRow[], VisitRow[]];
  return {
    facilityId: facility.facility_id,
    facilityName: facility.name,
    day,
    timeZone: zone,
    expected: rows.filter((r) => r.checked_in_at === null).map((r) => visitOf(r, day, zone)),
    onSite: onSite.map((r) => visitOf(r, day, zone)),
    left: rows.filter((r) => r.checked_out_at !== null).map((r) => visitOf(r, day, zone)),
    asOf: time.slice(0, 8),
  };
}

export function visitorsSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const desk = guard(env, 'admin');

  async function facilitiesOf(orgId: number): Promise<DeskFacility[]> {
    const rows = await deps.db<FacilityRow>(READ_MODELS.facilities).where({ org_id: orgId, is_active: true }).orderBy('name').select('facility_id', 'name', 'time_zone');
    return rows.map((r) => ({ facility_id: Number(r.facility_id), name: r.name, time_zone: r.time_zone || 'UTC' }));
  }

  /** The facility asked for (another organization's: 404), else the first. */
  function chosen(ctx: HttpContext, facilities: readonly DeskFacility[]): DeskFacility | null {
    const asked = ctx.query.facility;
    if (typeof asked !== 'string' || asked === '') return facilities[0] ?? null;
    const id = idParam(asked);
    const found = facilities.find((f) => f.facility_id === id);
    if (found === undefined) throw new NotFoundError('facility not found');
    return found;
  }

  router.get(CONSOLE_PATHS.visitors, ...desk, async (ctx) => {
    const user = consoleUser(ctx);
    const facilities = await facilitiesOf(user.orgId);
    const facility = chosen(ctx, facilities);
    const view = facility === null ? null : await visitorsView(deps.db, user.orgId, facility, new Date());
    const choices = facilities.map((f) => ({ value: String(f.facility_id), label: f.name }));
    sendConsolePage(ctx, visitorsPage({ user, csrfToken: kit.csrfToken(ctx), facilities: choices, view }));
  });

  router.get(`${CONSOLE_PATHS.visitors}/on-site`, ...desk, async (ctx) => {
    const user = consoleUser(ctx);
    const facility = chosen(ctx, await facilitiesOf(user.orgId));
    if (facility === null) throw new NotFoundError('no facility');
    const zone = facility.time_zone;
    const rows = (await onSiteQuery(deps.db, user.orgId, facility.facility_id)) as VisitRow[];
    const { date: day, time } = wallClock(zone, new Date());
    sendConsolePage(
      ctx,
      onSitePage({ user, csrfToken: kit.csrfToken(ctx), facilityId: facility.facility_id, facilityName: facility.name, onSite: rows.map((r) => visitOf(r, day, zone)), asOf: `${day} ${time.slice(0, 8)} (${zone})` }),
    );
  });
}
