/**
 * Built-in functions a statement may not call, per SQL family. Built-ins are allowed by default (count,
 * lower, date_trunc...); these reach outside the VDB: server files, other databases, SQL given as text,
 * server or session administration, sleeping and locking. A deny-list cannot be complete: the database
 * role the service connects as is the last line (docs/authorization.md).
 */
import type { SqlFamily } from '../plugin-api/sql-dialect.js';

interface RefusedFunctions {
  why: string;
  names?: readonly string[];
  prefixes?: readonly string[];
}

const REFUSED: Readonly<Record<SqlFamily, readonly RefusedFunctions[]>> = {
  postgres: [
    {
      why: 'reads server files',
      names: ['pg_stat_file', 'pg_current_logfile'],
      prefixes: ['pg_read_', 'pg_ls_', 'pg_file_', 'lo_', 'loread', 'lowrite'],
    },
    { why: 'reaches another database', prefixes: ['dblink'] },
    {
      why: 'runs SQL given as text',
      names: ['query_to_xml', 'query_to_xmlschema', 'query_to_xml_and_xmlschema', 'cursor_to_xml', 'cursor_to_xmlschema', 'ts_stat', 'ts_rewrite'],
      prefixes: ['table_to_xml', 'schema_to_xml', 'database_to_xml'],
    },
    {
      why: 'administers the server or other sessions',
      names: ['pg_reload_conf', 'pg_rotate_logfile', 'pg_terminate_backend', 'pg_cancel_backend', 'pg_switch_wal', 'pg_promote', 'pg_export_snapshot', 'pg_log_backend_memory_contexts', 'pg_import_system_collations'],
      prefixes: ['pg_stat_reset', 'pg_stat_get_activity', 'pg_stat_get_backend_', 'pg_create_', 'pg_drop_replication', 'pg_replication_', 'pg_logical_', 'pg_backup_', 'pg_wal_replay_', 'binary_upgrade_'],
    },
    { why: 'changes session or sequence state', names: ['set_config', 'setval', 'nextval', 'pg_notify'] },
    { why: 'sleeps or takes locks', prefixes: ['pg_sleep', 'pg_advisory', 'pg_try_advisory'] },
  ],
  mysql: [
    { why: 'reads server files', names: ['load_file'] },
    { why: 'runs system commands', names: ['sys_exec', 'sys_eval'] },
    {
      why: 'sleeps or takes locks',
      names: ['sleep', 'benchmark', 'get_lock', 'release_lock', 'release_all_locks', 'is_free_lock', 'is_used_lock', 'master_pos_wait', 'source_pos_wait', 'wait_for_executed_gtid_set'],
    },
  ],
  mssql: [
    { why: 'reaches files, other servers or the operating system', names: ['openrowset', 'opendatasource', 'openquery', 'openxml'], prefixes: ['xp_', 'sp_', 'fn_'] },
  ],
  oracle: [
    { why: 'reaches files, the network or the server', prefixes: ['dbms_', 'utl_'] },
  ],
};

/** Schemas whose functions are built-ins, compared after the family's case folding. */
const BUILTIN_SCHEMAS: Readonly<Record<SqlFamily, readonly string[]>> = {
  postgres: ['pg_catalog'],
  mysql: [],
  mssql: [],
  oracle: [],
};

/**
 * Oracle calls a function named without parentheses (`secret_fn`, `pkg.fn`), so there a name that is no
 * column may be a call. These built-ins and pseudo-columns are the bare names allowed.
 */
const ORACLE_BARE_BUILTINS = new Set([
  'SYSDATE', 'SYSTIMESTAMP', 'CURRENT_DATE', 'CURRENT_TIMESTAMP', 'LOCALTIMESTAMP', 'DBTIMEZONE', 'SESSIONTIMEZONE',
  'USER', 'UID', 'ROWNUM', 'ROWID', 'LEVEL',
]);

/**
 * What a name that is no column of a relation of the statement can be: a column of a derived table (or an
 * error), an allowed built-in, or, in Oracle, a call of some function.
 */
export function bareNameKind(family: SqlFamily, name: string): 'column' | 'builtin' | 'call' {
  if (family !== 'oracle') return 'column';
  return ORACLE_BARE_BUILTINS.has(name.toUpperCase()) ? 'builtin' : 'call';
}

export function isBuiltinSchema(family: SqlFamily, schema: string): boolean {
  return BUILTIN_SCHEMAS[family].includes(schema);
}

/** Why the built-in function `name` is refused, or undefined when it may be called. */
export function refusedBuiltin(family: SqlFamily, name: string): string | undefined {
  const lower = name.toLowerCase();
  const rule = REFUSED[family].find((candidate) =>
    (candidate.names?.includes(lower) ?? false) || (candidate.prefixes?.some((prefix) => lower.startsWith(prefix)) ?? false));
  return rule?.why;
}
