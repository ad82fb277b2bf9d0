/**
 * The plugin API (`vdb-service/plugin-api`): everything a plugin may import from the service, and nothing
 * else. Its version is `PLUGIN_API_VERSION` (docs/plugin-api-changelog.md); a manifest's `apiVersion` names
 * the versions a plugin is written for. Holds the registration context, the contract of each plugin kind
 * with its declaration helper, the domain errors and the catalog of their codes, the vocabulary the
 * contracts speak (catalog, VDB, semantic package, Task API documents), and the helpers plugins share
 * (placeholder and YAML handling for template engines, bearer tokens for auth schemes, document checks for
 * runtimes). An SQL backend imports `vdb-service/adapter-kit` instead, which adds the dialect contract and
 * its helpers. Anything not exported here is internal and may change without notice.
 */
export * from './api-version.js';
export * from './plugin-manifest.js';
export * from './plugin-context.js';
export { defineAuthScheme, defineRuntimeTransport, defineSemanticProvider, defineTemplateEngine, defineTemplateFunctions } from './define-plugin.js';
export * from './error-catalog.js';
export {
  AuthenticationError, ConflictError, DeadlineError, ForbiddenError, InputError, InternalError, LimitError, NotFoundError,
  PayloadTooLargeError, ServiceError, StartupError, UnavailableError, UnsupportedMediaTypeError, UpstreamError, messageOf,
  type ErrorOptions, type StartupProblem,
} from './errors.js';
export * from './catalog.js';
export * from './vdb.js';
export type { JsonValue, ResultColumn } from './sql-dialect.js';
export * from './auth-scheme.js';
export * from './bearer-token.js';
export * from './template-engine.js';
export * from './semantic-provider.js';
export * from './semantic-package.js';
export * from './semantic-query.js';
export { TIME_GRAINS, type TimeGrain } from './semantic-query-syntax.js';
export * from './runtime-transport.js';
export * from './task-documents.js';

// Shared helpers of template engines: the placeholder a bound value prints, definition layout, bounded YAML.
export { PLACEHOLDER_OPEN, PLACEHOLDER_CLOSE, placeholderToken } from '../endpoints/bound-text.js';
export { DeferredValue } from '../endpoints/deferred-value.js';
export { DefinitionError } from '../endpoints/definition-error.js';
export { layoutDefinition } from '../endpoints/definition-layout.js';
export { RenderedYamlCache } from '../endpoints/rendered-yaml-cache.js';
export { parseBoundedYaml } from '../endpoints/bounded-yaml.js';

// Shared helpers of semantic providers and runtimes.
export { catalogModule } from '../semantic/catalog-model.js';
export { validateRuntimeDocument } from '../tasks/runtime-documents.js';
export { configFileFrom, loadConfig } from '../config/config-loader.js';
export { displayPath } from '../config/yaml-source.js';
