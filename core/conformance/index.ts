/**
 * The conformance suites of the plugin kinds (`vdb-service/plugin-api/conformance`): each takes a plugin
 * folder (its plugin.json beside its built entry) and what to try it with, loads it through the service's
 * own loader, and returns runner-neutral cases:
 *
 * ```ts
 * import { test } from 'uvu';
 * import { authSchemeConformance } from 'vdb-service/plugin-api/conformance';
 * for (const c of authSchemeConformance({ plugin: 'dist/my-scheme', settings, accepted, refused })) test(c.name, c.run);
 * test.run();
 * ```
 * The dialect suite of SQL backends is `vdb-service/adapter-kit/conformance`.
 */
export { runConformance, loadContribution, type ConformanceCase, type ConformanceFailure, type LoadedContribution } from './conformance-case.js';
export { authSchemeConformance, type AuthSchemeConformanceTarget } from './auth-scheme-conformance.js';
export { templateEngineConformance, type TemplateEngineConformanceTarget, type TemplateSyntax } from './template-engine-conformance.js';
export { semanticProviderConformance, type SemanticProviderConformanceTarget } from './semantic-provider-conformance.js';
export { runtimeTransportConformance, type RuntimeTransportConformanceTarget } from './runtime-transport-conformance.js';
