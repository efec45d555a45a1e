// GET /api/v1/org/facilities end to end.
import { expect } from 'chai';
import { startStack, type Stack, type Tenant } from '../support/stack.js';
import { businessErrorSchema, facilityListSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from './response-shapes.js';

describe('organization API: list facilities (GET /api/v1/org/facilities)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    stack = await startStack({ label: 'org_facilities' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
    await stack?.stop();
  });

  it("answers {success, facilities} with every facility of the organization and its state", async () => {
    const suspended = await stack.seed.facility(tenant.orgId, { name: 'Loading dock', description: 'Deliveries only' });
    await stack.seed.suspendFacility(suspended);
    const deactivated = await stack.seed.facility(tenant.orgId, { name: 'Old wing' });
    await stack.seed.deactivateFacility(deactivated);
    await stack.seed.tenant(); // another organization's facility must not show

    const res = await stack.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey });
    expect(res.status).to.equal(200);
    expectShape(res.body, facilityListSchema);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body).to.deep.equal({
      success: true,
      facilities: [
        { id: tenant.facilityId, name: 'Main entrance', description: null, is_active: true, suspended: false, time_zone: 'UTC' },
        { id: suspended, name: 'Loading dock', description: 'Deliveries only', is_active: true, suspended: true, time_zone: 'UTC' },
        { id: deactivated, name: 'Old wing', description: null, is_active: false, suspended: false, time_zone: 'UTC' },
      ],
    });
  });

  it('is an empty list for an organization without facilities', async () => {
    const orgId = await stack.seed.organization();
    const userId = await stack.seed.admin(orgId);
    const { apiKey } = await stack.seed.apiKey(orgId, userId);
    const res = await stack.request('GET', '/api/v1/org/facilities', { apiKey });
    expect(res.body).to.deep.equal({ success: true, facilities: [] });
  });

  it('400 for an unknown query parameter', async () => {
    const res = await stack.request('GET', '/api/v1/org/facilities?active=true', { apiKey: tenant.apiKey });
    expect(res.status).to.equal(400);
    expectShape(res.body, businessErrorSchema, 'error');
    expect(res.body.error).to.match(/unknown parameter 'active'/);
  });

  it('403 insufficient_scope for a key without org:facilities:read', async () => {
    const { apiKey } = await stack.seed.apiKey(tenant.orgId, tenant.userId, { scopes: ['org:passes:read', 'org:passes:write'] });
    const res = await stack.request('GET', '/api/v1/org/facilities', { apiKey });
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ error: 'insufficient_scope' });
    expect(res.headers.get('www-authenticate')).to.match(/error="insufficient_scope", scope="org:facilities:read"/);
  });
});
