// Import rules checked by `npm test` (and `npm run check:imports`) over the production code.
// Type-only imports count: a circle through `import type` is still a circle in the design.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles (type imports count): a type two modules share lives below both.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'cli-only-from-cli',
      severity: 'error',
      comment: 'cli/ is the operator CLI: no production module outside it imports from it.',
      from: { pathNot: '^cli/' },
      to: { path: '^cli/' },
    },
    {
      name: 'query-not-into-command',
      severity: 'error',
      comment: 'The query service does not depend on the command service, directly or through another module (the runtime).',
      from: { path: '^query-service/' },
      to: { path: '^command-service/', reachable: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // tsconfig.json resolves the `.js` specifiers to the `.ts` sources (a circle planted in a test
    // run was reported, so resolution works; an unresolved import would fail typecheck first).
    doNotFollow: { path: 'node_modules' },
    // Production code only: tests and benchmarks may reach anywhere. runtime/ is the composition
    // root; console/ is the tenant console.
    includeOnly: { path: '^(shared|command-service|query-service|projections|door-gateway|cli|runtime|console)/' },
    exclude: { path: '(^|/)(node_modules|dist|var|test|bench|deploy|docs)/' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      exportsFields: ['exports'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
