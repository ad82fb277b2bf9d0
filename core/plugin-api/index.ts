/**
 * The plugin API: everything a plugin or a dialect adapter may import from the core, and nothing else.
 * Contracts of each plugin kind with their declaration helpers, the tokens a registration may resolve, the
 * domain errors and the catalog of their codes, and the helpers plugins share (the dialect base, SQL
 * grammars, knex-backed datasources, catalog reading and JSON encoding for dialects; placeholder and YAML
 * handling for template engines; document checks for runtimes).
 * Anything not exported here is internal and may change without notice.
 */
export * from './error-catalog.js';
export * from './errors.js';
export * from './plugin-manifest.js';
export * from './tokens.js';
export * from './define-plugin.js';
export * from './catalog.js';
export * from './vdb.js';
export * from './sql-dialect.js';
export * from './database-roles.js';
export * from './sql-syntax.js';
export * from './sql-grammar.js';
export * from './statement-facts.js';
export * from './denial.js';
export * from './builtin-functions.js';
export * from './dialect-base.js';
export * from './auth-scheme.js';
export * from './bearer-token.js';
export * from './template-engine.js';
export * from './semantic-provider.js';
export * from './semantic-package.js';
export * from './semantic-query-syntax.js';
export * from './semantic-query.js';
export * from './runtime-transport.js';
export * from './task-documents.js';

// Shared helpers of dialect adapters: the grammars a dialect builds its parser from, datasources, catalogs, values.
export { libpgQueryGrammar } from '../sql-grammar/libpg-query-grammar.js';
export { nodeSqlParserGrammar, type NodeSqlParserGrammarOptions } from '../sql-grammar/node-sql-parser-grammar.js';
export { KnexDatasource, createKnex, knexPool, placeholders, DEFAULT_ACQUIRE_TIMEOUT_MS, type RowReader } from '../sql/knex-datasource.js';
export { readCatalog, type IntrospectionQueries, type NativeTypeReader } from '../sql/catalog-assembly.js';
export { type ValueCodec } from '../sql/value-encoding.js';
export { encodeResult, ResultBuilder, type ResultLimits } from '../sql/result-builder.js';
export { offAbort, onAbort } from '../sql/abort-listeners.js';
export { armDeadline, isDeadlineExceeded, DEADLINE_SLACK_MS, PING_TIMEOUT_MS } from '../sql/statement-deadline.js';
export { isConnectionFailure } from '../sql/statement-failure.js';
export { lookupLogicalType, parseNativeType, type LogicalTypeTable } from '../sql/logical-types.js';
export { LruCache } from '../caching/lru-cache.js';

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
