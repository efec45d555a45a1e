// DELETE /api/v1/org/passes/{public_id} end to end.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { businessErrorSchema, revokeResponseSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from './response-shapes.js';

describe('organization API: revoke a pass (DELETE /api/v1/org/passes/{public_id})', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    stack = await startStack({ label: 'org_revoke' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
    await stack?.stop();
  });

  async function createPass(t: Tenant = tenant): Promise<string> {
    const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: t.apiKey, json: passBody(t.facilityId) });
    expect(res.status).to.equal(201);
    return res.body.public_id as string;
  }
  const revoke = (publicId: string, apiKey = tenant.apiKey) => stack.request('DELETE', `/api/v1/org/passes/${publicId}`, { apiKey });
  const statusOf = async (publicId: string, apiKey = tenant.apiKey) => {
    const list = await stack.request('GET', '/api/v1/org/passes?limit=100', { apiKey });
    return (list.body.items as Array<{ public_id: string; status: string }>).find((p) => p.public_id === publicId)?.status;
  };

  it('revokes an active pass: 200 with the revoke response, cancelled in the list at once', async () => {
    const publicId = await createPass();
    const res = await revoke(publicId);
    expect(res.status).to.equal(200);
    expectShape(res.body, revokeResponseSchema);
    expect(res.body).to.deep.equal({ success: true, public_id: publicId, revoked: true });
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(await statusOf(publicId)).to.equal('cancelled');
  });

  it('records PassRevoked with the API key as actor and the request id as correlation id', async () => {
    const publicId = await createPass();
    const res = await stack.request('DELETE', `/api/v1/org/passes/${publicId}`, { apiKey: tenant.apiKey, headers: { 'X-Request-Id': 'corr-revoke-1' } });
    expect(res.status).to.equal(200);
    const events = (await stack.store.readAll()).filter((e) => e.type === 'PassRevoked' && e.metadata.correlationId === 'corr-revoke-1');
    expect(events).to.have.length(1);
    expect(events[0]!.metadata.actor).to.deep.equal({ kind: 'apiKey', id: tenant.keyId, userId: tenant.userId });
  });

  it('409 when the pass is no longer active (revoking twice), and nothing more is written', async () => {
    const publicId = await createPass();
    expect((await revoke(publicId)).status).to.equal(200);
    const before = await stack.store.headPosition();
    const again = await revoke(publicId);
    expect(again.status).to.equal(409);
    expectShape(again.body, businessErrorSchema, 'error');
    expect(again.body.code).to.equal('conflict');
    expect(await stack.store.headPosition()).to.deep.equal(before);
  });

  it('revokes any pass of the organization regardless of which admin created it', async () => {
    const otherAdmin = await stack.seed.admin(tenant.orgId);
    const otherKey = await stack.seed.apiKey(tenant.orgId, otherAdmin);
    const publicId = await createPass({ ...tenant, ...otherKey, userId: otherAdmin });
    expect((await revoke(publicId)).status).to.equal(200);
  });

  it('404 for a pass of another organization, which stays active', async () => {
    const other = await stack.seed.tenant();
    const foreign = await createPass(other);
    const res = await revoke(foreign);
    expect(res.status).to.equal(404);
    expectShape(res.body, businessErrorSchema, 'error');
    expect(res.body.code).to.equal('not_found');
    expect(await statusOf(foreign, other.apiKey)).to.equal('expected');
  });

  it('404 for an unknown or malformed public id, never a 500', async () => {
    for (const id of ['gst_00000000000000000000000000000000', 'gst_', 'nope', 'gst_XYZ', '%E0%A4%A', 'gst_%00', 'x'.repeat(2000), '..%2F..%2Fetc']) {
      const res = await revoke(id);
      expect(res.status, id).to.equal(404);
      expect(res.body, id).to.include({ success: false });
    }
  });

  it('403 insufficient_scope for a key without org:passes:write', async () => {
    const publicId = await createPass();
    const readOnly = await stack.seed.apiKey(tenant.orgId, tenant.userId, { scopes: ['org:passes:read'] });
    const res = await revoke(publicId, readOnly.apiKey);
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ error: 'insufficient_scope' });
    expect(res.headers.get('www-authenticate')).to.match(/error="insufficient_scope", scope="org:passes:write"/);
    expect(await statusOf(publicId)).to.equal('expected');
  });
});
