// The user-delegated part of the OpenAPI document, merged into the organization document the way
// buildOpenApiDocument() is to merge it: every endpoint with its scope and errors, every reference
// resolvable, every schema valid JSON Schema 2020-12.
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../query-service/openapi/openapi-document.js';
import { userApiPaths, userApiSchemas, userApiSecuritySchemes } from '../../query-service/openapi/user-api-openapi.js';
import { listPassesQuerySchema } from '../../query-service/org-passes/list-org-passes.js';

type Operation = { security: Array<Record<string, string[]>>; responses: Record<string, unknown>; parameters?: Array<{ name: string }> };

describe('OpenAPI: user-delegated endpoints (unit)', () => {
  const base = buildOpenApiDocument() as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } };
  const doc = {
    ...base,
    paths: { ...base.paths, ...userApiPaths() } as Record<string, Record<string, Operation>>,
    components: {
      schemas: { ...base.components.schemas, ...userApiSchemas },
      securitySchemes: { ...base.components.securitySchemes, ...userApiSecuritySchemes },
    },
  };

  it('describes each endpoint with the scope it needs and its errors', () => {
    const expected: Array<[string, string, string, string[]]> = [
      ['/api/v1/passes', 'get', 'passes:read', ['200', '400', '401', '403', '429']],
      ['/api/v1/passes', 'post', 'passes:write', ['201', '400', '401', '402', '403', '404', '409', '429']],
      ['/api/v1/passes/{public_id}', 'get', 'passes:read', ['200', '401', '403', '404', '429']],
      ['/api/v1/passes/{public_id}', 'delete', 'passes:write', ['200', '401', '403', '404', '409', '429']],
      ['/api/v1/invites', 'get', 'invites:read', ['200', '401', '403', '429']],
      ['/api/oauth/userinfo', 'get', 'openid', ['200', '401', '403', '429']],
      ['/api/oauth/userinfo', 'post', 'openid', ['200', '401', '403', '429']],
    ];
    for (const [path, method, scope, statuses] of expected) {
      const operation = doc.paths[path]![method]!;
      expect(operation.security, `${method} ${path}`).to.deep.equal([{ accessToken: [scope] }]);
      expect(Object.keys(operation.responses), `${method} ${path}`).to.include.members(statuses);
    }
    expect(doc.paths['/api/v1/passes']!.get!.parameters!.map((p) => p.name)).to.deep.equal(Object.keys(listPassesQuerySchema.properties as object));
    // The organization endpoints are still there.
    expect(doc.paths).to.include.keys('/api/v1/org/passes', '/api/v1/org/facilities');
  });

  it('has only resolvable references and schemas that compile as JSON Schema 2020-12', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = /#\/components\/schemas\/(.+)"$/.exec(ref)?.[1];
      expect(name && doc.components.schemas[name], ref).to.exist;
    }
    const ajv = new Ajv2020({ strict: false });
    addFormatsModule.default(ajv);
    for (const [name, schema] of Object.entries(userApiSchemas)) expect(() => ajv.compile(schema), name).not.to.throw();
  });
});
