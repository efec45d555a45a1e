// /settings/facilities (admins): list, add, edit (name, description, time zone), suspend, resume
// and deactivate, through the use cases of `facility create|suspend|resume|deactivate` (scoped to
// the organization: another's facility is 404).
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS, type FacilityRow } from '../../shared/db/read-models.js';
import { DomainError, NotFoundError } from '../../shared/errors.js';
import { addFacility } from '../../command-service/facilities/add-facility.js';
import { changeFacilityDetails } from '../../command-service/facilities/change-facility-details.js';
import { deactivateFacility, resumeFacility, suspendFacility } from '../../command-service/facilities/change-facility-status.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, idParam, postedForm, sendConfirmPage, sendConsolePage } from '../console-guard.js';
import { fieldOfRefusal, refusalMessage, text } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { NO_ERRORS } from '../pages/form-fields.js';
import { EMPTY_FACILITY_FORM, facilitiesPage, facilityFormPage, type FacilityForm, type FacilityListItem } from './facilities-pages.js';

const REFUSAL_FIELDS = [
  [/description/i, 'description'],
  [/time zone/i, 'time_zone'],
  [/name/i, 'name'],
] as const;

export function facilitiesSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const admin = guard(env, 'admin');
  const path = (id: number, action: string) => `${CONSOLE_PATHS.facilities}/${id}/${action}`;

  async function facilityOf(ctx: HttpContext): Promise<FacilityListItem> {
    const row = await deps
      .db<FacilityRow>(READ_MODELS.facilities)
      .first('facility_id', 'name', 'description', 'is_active', 'suspended', 'time_zone')
      .where({ facility_id: idParam(ctx.params.facilityId), org_id: consoleUser(ctx).orgId });
    if (row === undefined) throw new NotFoundError('facility not found');
    return { ...row, facility_id: Number(row.facility_id) };
  }

  function formOf(ctx: HttpContext): FacilityForm {
    const fields = postedForm(ctx);
    return { name: text(fields, 'name'), description: text(fields, 'description'), timeZone: text(fields, 'time_zone') || 'UTC' };
  }

  router.get(CONSOLE_PATHS.facilities, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const rows = await deps
      .db<FacilityRow>(READ_MODELS.facilities)
      .where({ org_id: user.orgId })
      .orderBy([{ column: 'is_active', order: 'desc' }, { column: 'facility_id' }])
      .select('facility_id', 'name', 'description', 'is_active', 'suspended', 'time_zone');
    const notice = typeof ctx.query.notice === 'string' ? ctx.query.notice : null;
    sendConsolePage(ctx, facilitiesPage({ user, csrfToken: kit.csrfToken(ctx), facilities: rows.map((r) => ({ ...r, facility_id: Number(r.facility_id) })), notice }));
  });

  router.get(`${CONSOLE_PATHS.facilities}/new`, ...admin, (ctx) => {
    sendConsolePage(ctx, facilityFormPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), form: EMPTY_FACILITY_FORM, errors: NO_ERRORS, action: ctx.path, editing: false }));
  });

  router.post(`${CONSOLE_PATHS.facilities}/new`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const form = formOf(ctx);
    try {
      await addFacility(deps, { orgId: user.orgId, name: form.name, description: form.description, timeZone: form.timeZone }, userCommandContext(ctx, user.userId, new Date()));
      redirectTo(ctx, `${CONSOLE_PATHS.facilities}?notice=added`);
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      const errors = { [fieldOfRefusal(error, REFUSAL_FIELDS, 'name')]: refusalMessage(error) };
      sendConsolePage(ctx, facilityFormPage({ user, csrfToken: kit.csrfToken(ctx), form, errors, action: ctx.path, editing: false }), 400);
    }
  });

  router.get(`${CONSOLE_PATHS.facilities}/:facilityId/edit`, ...admin, async (ctx) => {
    const f = await facilityOf(ctx);
    if (!f.is_active) throw new NotFoundError('facility deactivated');
    const form = { name: f.name, description: f.description ?? '', timeZone: f.time_zone };
    sendConsolePage(ctx, facilityFormPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), form, errors: NO_ERRORS, action: ctx.path, editing: true }));
  });

  router.post(`${CONSOLE_PATHS.facilities}/:facilityId/edit`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const f = await facilityOf(ctx);
    const form = formOf(ctx);
    try {
      await changeFacilityDetails(
        deps,
        { facilityId: f.facility_id, orgId: user.orgId, name: form.name, description: form.description, timeZone: form.timeZone },
        userCommandContext(ctx, user.userId, new Date()),
      );
      redirectTo(ctx, `${CONSOLE_PATHS.facilities}?notice=saved`);
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      const errors = { [fieldOfRefusal(error, REFUSAL_FIELDS, 'name')]: refusalMessage(error) };
      sendConsolePage(ctx, facilityFormPage({ user, csrfToken: kit.csrfToken(ctx), form, errors, action: ctx.path, editing: true }), 400);
    }
  });

  for (const [action, change, notice] of [
    ['suspend', suspendFacility, 'suspended'],
    ['resume', resumeFacility, 'resumed'],
  ] as const) {
    router.post(`${CONSOLE_PATHS.facilities}/:facilityId/${action}`, ...admin, async (ctx) => {
      const user = consoleUser(ctx);
      const f = await facilityOf(ctx);
      await change(deps, { facilityId: f.facility_id, orgId: user.orgId }, userCommandContext(ctx, user.userId, new Date()));
      redirectTo(ctx, `${CONSOLE_PATHS.facilities}?notice=${notice}`);
    });
  }

  router.get(`${CONSOLE_PATHS.facilities}/:facilityId/deactivate`, ...admin, async (ctx) => {
    const f = await facilityOf(ctx);
    sendConfirmPage(env, ctx, {
      current: CONSOLE_PATHS.facilities,
      title: `Deactivate ${f.name}?`,
      consequence: 'It takes no new passes, for good: a deactivated facility cannot be resumed.',
      action: path(f.facility_id, 'deactivate'),
      buttonText: 'Deactivate facility',
    });
  });

  router.post(`${CONSOLE_PATHS.facilities}/:facilityId/deactivate`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const f = await facilityOf(ctx);
    await deactivateFacility(deps, { facilityId: f.facility_id, orgId: user.orgId }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.facilities}?notice=deactivated`);
  });
}
