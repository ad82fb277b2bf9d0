/**
 * The adapter kit (`vdb-service/adapter-kit`): what an SQL backend (a `sqlDialect` plugin) imports. All of
 * the plugin API, plus the dialect contract (`SqlDialect`, `Datasource` and the types they use), the
 * `DialectBase` every dialect extends, and the helpers dialects share: the two SQL grammars, knex-backed
 * datasources and pools, catalog assembly from introspection queries, the JSON encoding of results,
 * the adapter's side of statement deadlines (`onDeadline`) and cancellation, logical-type tables, the worker-thread RPC
 * of a datasource that runs its statements off the event loop (`WorkerRpc`). Its conformance suite is
 * `vdb-service/adapter-kit/conformance`.
 */
export * from './index.js';
export { defineSqlDialect } from './define-plugin.js';
export * from './sql-dialect.js';
export * from './database-roles.js';
export * from './sql-syntax.js';
export * from './sql-grammar.js';
export * from './statement-facts.js';
export * from './denial.js';
export * from './builtin-functions.js';
export * from './dialect-base.js';
export * from './semantic-query-syntax.js';

// Shared helpers of dialect adapters: the grammars a dialect builds its parser from, datasources, catalogs, values.
export { libpgQueryGrammar } from '../sql-grammar/libpg-query-grammar.js';
export { nodeSqlParserGrammar, type NodeSqlParserGrammarOptions } from '../sql-grammar/node-sql-parser-grammar.js';
export { KnexDatasource, createKnex, knexPool, placeholders, DEFAULT_ACQUIRE_TIMEOUT_MS, type RowReader } from '../sql/knex-datasource.js';
export { buildTableStatement, knexPoolUsage } from '../sql/knex-table-statements.js';
export { readCatalog, type IntrospectionQueries, type NativeTypeReader } from '../sql/catalog-assembly.js';
export { type ValueCodec } from '../sql/value-encoding.js';
export { encodeResult, ResultBuilder, type ResultLimits } from '../sql/result-builder.js';
export { offAbort, onAbort } from '../sql/abort-listeners.js';
export { onDeadline, isDeadlineExceeded, DEADLINE_SLACK_MS, PING_TIMEOUT_MS } from '../sql/statement-deadline.js';
export { isConnectionFailure } from '../sql/statement-failure.js';
export { lookupLogicalType, parseNativeType, type LogicalTypeTable } from '../sql/logical-types.js';
export { LruCache } from '../caching/lru-cache.js';
export { WorkerRpc, type WorkerRpcErrors, type WorkerRpcOptions, type WorkerRequestLimit, type RunningRequest, type WireError } from '../sql/worker-rpc.js';
