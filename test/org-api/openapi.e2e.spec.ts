// GET /api/v1/openapi.json: a valid OpenAPI 3.1 document, version 1.0.0, describing every
// organization endpoint with the schemas that validate requests.
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startStack, type Stack } from '../support/stack.js';
import { createPassRequestSchema } from '../../shared/domain/pass-request.js';
import { listPassesQuerySchema } from '../../query-service/org-passes/list-org-passes.js';

type Doc = {
  openapi: string;
  info: { version: string; title: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[]; parameters?: Array<{ name: string; schema: unknown }> }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

describe('OpenAPI document (GET /api/v1/openapi.json)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let doc: Doc;

  before(async () => {
    stack = await startStack({ label: 'openapi' });
    const res = await stack.request('GET', '/api/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    doc = JSON.parse(res.text) as Doc;
  });
  after(async () => {
    await stack?.stop();
  });

  it('is OpenAPI 3.1 with API version 1.0.0, public, not cacheable', async () => {
    expect(doc.openapi).to.match(/^3\.1\.\d+$/);
    expect(doc.info.version).to.equal('1.0.0');
    expect(doc.info.title).to.be.a('string').and.not.empty;
    const res = await stack.request('GET', '/api/v1/openapi.json');
    expect(res.headers.get('cache-control')).to.equal('no-store');
  });

  it('describes every organization endpoint with its security, errors and shapes', () => {
    expect(doc.paths['/api/v1/org/passes']).to.have.keys('get', 'post');
    expect(doc.paths['/api/v1/org/passes/{public_id}']).to.have.keys('delete');
    expect(doc.paths['/api/v1/org/facilities']).to.have.keys('get');
    expect(Object.keys(doc.paths['/api/v1/org/passes']!.post!.responses)).to.include.members(['201', '400', '401', '402', '403', '404', '409', '413', '429']);
    expect(Object.keys(doc.paths['/api/v1/org/passes/{public_id}']!.delete!.responses)).to.include.members(['200', '401', '403', '404', '409', '429']);
    expect(Object.keys(doc.paths['/api/v1/org/passes']!.get!.responses)).to.include.members(['200', '400', '401', '403', '429']);
    expect(doc.components.securitySchemes).to.deep.include({
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Organization API key.' },
    });
    expect(doc.components.securitySchemes).to.have.property('apiKeyBearer');
  });

  it('publishes the very schemas that validate requests', () => {
    expect(doc.components.schemas.CreatePassRequest).to.deep.equal(JSON.parse(JSON.stringify(createPassRequestSchema)));
    const params = doc.paths['/api/v1/org/passes']!.get!.parameters!;
    expect(params.map((p) => p.name)).to.deep.equal(Object.keys(listPassesQuerySchema.properties as object));
    expect(params.find((p) => p.name === 'limit')!.schema).to.deep.include({ type: 'integer', minimum: 1, maximum: 100, default: 30 });
  });

  it('has only resolvable references and schemas that compile as JSON Schema 2020-12', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).to.be.greaterThan(5);
    for (const ref of refs) {
      const name = /#\/components\/schemas\/(.+)"$/.exec(ref)?.[1];
      expect(name && doc.components.schemas[name], ref).to.exist;
    }
    const ajv = new Ajv2020({ strict: false });
    addFormatsModule.default(ajv);
    ajv.addSchema({ $id: 'doc', $defs: doc.components.schemas });
    for (const name of Object.keys(doc.components.schemas)) {
      const schema = JSON.parse(JSON.stringify(doc.components.schemas[name]).replace(/#\/components\/schemas\//g, 'doc#/$defs/'));
      expect(() => ajv.compile(schema), name).not.to.throw();
    }
  });
});
