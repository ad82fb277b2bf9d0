import { placeholders, type IntrospectionQueries } from '../../core/plugin-api/adapter-kit.js';

/**
 * Introspection of MySQL and MariaDB from information_schema; a schema is a database. MariaDB stores JSON
 * as LONGTEXT with a `json_valid(col)` check: such a column is reported with native type `json`.
 * Schema names are bound, never spliced.
 */
export function mysqlIntrospectionQueries(schemas: readonly string[], options: { mariadb: boolean }): IntrospectionQueries {
  const list = placeholders(schemas);
  const nativeType = options.mariadb
    ? `case when exists (select 1 from information_schema.CHECK_CONSTRAINTS k
        where k.CONSTRAINT_SCHEMA = c.TABLE_SCHEMA and k.TABLE_NAME = c.TABLE_NAME
          and k.CHECK_CLAUSE = concat('json_valid(\`', c.COLUMN_NAME, '\`)'))
      then 'json' else c.COLUMN_TYPE end`
    : 'c.COLUMN_TYPE';
  return {
    relations: {
      sql: `select TABLE_SCHEMA as schema_name, TABLE_NAME as relation_name,
  case when TABLE_TYPE = 'VIEW' then 'view' else 'table' end as relation_kind
from information_schema.TABLES
where TABLE_SCHEMA in (${list}) and TABLE_TYPE in ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')
order by 1, 2`,
      bindings: schemas,
    },
    columns: {
      sql: `select c.TABLE_SCHEMA as schema_name, c.TABLE_NAME as relation_name, c.COLUMN_NAME as column_name,
  ${nativeType} as native_type,
  c.IS_NULLABLE as is_nullable, c.ORDINAL_POSITION as ordinal
from information_schema.COLUMNS c
where c.TABLE_SCHEMA in (${list})
order by 1, 2, c.ORDINAL_POSITION`,
      bindings: schemas,
    },
    keys: {
      // In MySQL every unique index is a UNIQUE constraint.
      sql: `select t.TABLE_SCHEMA as schema_name, t.TABLE_NAME as relation_name, t.CONSTRAINT_NAME as constraint_name,
  case when t.CONSTRAINT_TYPE = 'PRIMARY KEY' then 'p' else 'u' end as constraint_type,
  k.COLUMN_NAME as column_name, k.ORDINAL_POSITION as position
from information_schema.TABLE_CONSTRAINTS t
join information_schema.KEY_COLUMN_USAGE k on k.CONSTRAINT_SCHEMA = t.CONSTRAINT_SCHEMA
  and k.TABLE_NAME = t.TABLE_NAME and k.CONSTRAINT_NAME = t.CONSTRAINT_NAME
where t.TABLE_SCHEMA in (${list}) and t.CONSTRAINT_TYPE in ('PRIMARY KEY', 'UNIQUE')
order by 1, 2, 3, 6`,
      bindings: schemas,
    },
    foreignKeys: {
      sql: `select k.TABLE_SCHEMA as schema_name, k.TABLE_NAME as relation_name, k.CONSTRAINT_NAME as constraint_name,
  k.COLUMN_NAME as column_name, k.ORDINAL_POSITION as position, k.REFERENCED_TABLE_SCHEMA as ref_schema,
  k.REFERENCED_TABLE_NAME as ref_relation, k.REFERENCED_COLUMN_NAME as ref_column
from information_schema.KEY_COLUMN_USAGE k
where k.TABLE_SCHEMA in (${list}) and k.REFERENCED_TABLE_NAME is not null
order by 1, 2, 3, 5`,
      bindings: schemas,
    },
    functions: {
      sql: `select ROUTINE_SCHEMA as schema_name, ROUTINE_NAME as function_name,
  case when ROUTINE_TYPE = 'PROCEDURE' then 'procedure' else 'function' end as function_kind,
  case when ROUTINE_TYPE = 'PROCEDURE' then '' else DTD_IDENTIFIER end as return_type,
  coalesce((select group_concat(p.DTD_IDENTIFIER order by p.ORDINAL_POSITION separator ';') from information_schema.PARAMETERS p
    where p.SPECIFIC_SCHEMA = r.ROUTINE_SCHEMA and p.SPECIFIC_NAME = r.SPECIFIC_NAME and p.ORDINAL_POSITION > 0
      and coalesce(p.PARAMETER_MODE, 'IN') in ('IN', 'INOUT')), '') as argument_types
from information_schema.ROUTINES r
where ROUTINE_SCHEMA in (${list}) and ROUTINE_TYPE in ('FUNCTION', 'PROCEDURE')
order by 1, 2`,
      bindings: schemas,
    },
  };
}
