/**
 * The function allow-list of catalog statements: the functions clients call to read the catalogs (psql,
 * JDBC, BI tools, pg_dump), and those the VDB's data path allows (the dialect's list and `allowFunctions`).
 * Anything else, among them whatever sleeps, runs a query given as text, reads files or changes the session
 * (`pg_sleep`, `query_to_xml`, `pg_read_file`, `set_config` of anything but the search path), is refused as
 * on the data path, even though the mirror holds nothing the caller may not see.
 */
import type { CatalogCall } from './catalog-statement.js';

/** Functions that read the catalogs or describe the session, and the general ones catalog queries use. */
const INTROSPECTION: ReadonlySet<string> = new Set([
  // the session and server, as catalog-statement.ts claims them
  'version', 'current_schema', 'current_schemas', 'current_setting', 'current_database', 'current_catalog', 'current_user', 'session_user',
  // describing catalog rows
  'format_type', 'obj_description', 'col_description', 'shobj_description', 'pg_describe_object', 'pg_identify_object',
  'pg_identify_object_as_address', 'pg_encoding_to_char', 'pg_char_to_encoding', 'pg_client_encoding', 'pg_typeof', 'oidvectortypes',
  'acldefault', 'pg_relation_is_publishable', 'pg_partition_ancestors', 'pg_partition_root', 'pg_partition_tree', 'pg_tablespace_location',
  'pg_options_to_table', 'pg_index_column_has_property', 'pg_index_has_property', 'pg_indexam_has_property', 'pg_sequence_parameters',
  'pg_is_in_recovery', 'pg_backend_pid', 'pg_my_temp_schema', 'pg_is_other_temp_schema', 'pg_jit_available', 'pg_collation_actual_version',
  'pg_table_size', 'pg_relation_size', 'pg_total_relation_size', 'pg_indexes_size', 'pg_database_size', 'pg_size_pretty',
  'to_regclass', 'to_regtype', 'to_regproc', 'to_regprocedure', 'to_regnamespace', 'to_regrole', 'to_regtypemod', 'pg_has_role',
  'has_table_privilege', 'has_schema_privilege', 'has_database_privilege', 'has_column_privilege', 'has_function_privilege',
  'has_sequence_privilege', 'has_type_privilege', 'has_any_column_privilege', 'has_foreign_data_wrapper_privilege',
  'has_language_privilege', 'has_server_privilege', 'has_tablespace_privilege', 'has_parameter_privilege',
  // what psql's and JDBC's catalog queries use on the way
  'array_to_string', 'array_upper', 'array_lower', 'array_length', 'array_position', 'array_agg', 'string_agg', 'unnest',
  'generate_series', 'generate_subscripts', 'row_number', 'count', 'max', 'min', 'replace', 'lower', 'upper', 'length', 'substring', 'substr',
  'split_part', 'quote_ident', 'quote_literal', 'regexp_replace', 'concat', 'concat_ws', 'position', 'strpos', 'btrim', 'trim',
  'left', 'right', 'textlen', 'translate', 'string_to_array', 'format', 'age', 'bool_or', 'bool_and', 'json_agg', 'json_build_object',
  'jsonb_agg', 'jsonb_build_object', 'array_remove', 'array_append', 'cardinality',
]);

/**
 * Name patterns of functions that only read the catalogs: the definitions (`pg_get_indexdef`,
 * `pg_get_statisticsobjdef_columns`, `pg_get_function_arguments`), `pg_*_is_visible`. Not every `pg_get_*`:
 * some read the server's state (`pg_get_backend_memory_contexts`, `pg_get_wal_*`).
 */
const INTROSPECTION_PATTERNS: readonly RegExp[] = [
  /^pg_get_[a-z_]*def(_[a-z]+)?$/, /^pg_get_function_[a-z_]+$/, /^pg_get_(expr|userbyid|keywords|serial_sequence)$/, /^pg_[a-z_]+_is_visible$/,
];

/** Settings a catalog statement may set (for itself: each runs in a transaction that is rolled back): pg_dump's. */
const SETTABLE: ReadonlySet<string> = new Set(['search_path']);

/**
 * The first call of `calls` neither the catalog list nor `allowed` (the data path's allow-list, and the
 * VDB functions the caller may execute) allows, as written (`pg_catalog.pg_sleep`); undefined when all are.
 */
export function refusedCall(calls: readonly CatalogCall[], allowed: (name: string) => boolean): string | undefined {
  const refused = calls.find((call) => !callAllowed(call, allowed));
  return refused && (refused.schema === undefined ? refused.name : `${refused.schema}.${refused.name}`);
}

function callAllowed(call: CatalogCall, allowed: (name: string) => boolean): boolean {
  if (allowed(call.name)) return true;
  // information_schema's helpers (JDBC's `_pg_expandarray`) read the catalogs
  if (call.schema === 'information_schema' || (call.schema === undefined && call.name.startsWith('_pg_'))) return true;
  if (call.schema !== undefined && call.schema !== 'pg_catalog') return false;
  if (call.name === 'set_config') return call.firstArgument !== undefined && SETTABLE.has(call.firstArgument.toLowerCase());
  return INTROSPECTION.has(call.name) || INTROSPECTION_PATTERNS.some((pattern) => pattern.test(call.name));
}
