import { placeholders, type IntrospectionQueries } from '../../core/plugin-api/adapter-kit.js';

/**
 * Introspection of Oracle from the ALL_* dictionary views; a schema is an owner (usually upper case, as
 * Oracle stores unquoted names). Aliases are quoted so rows come back with lower-case keys. Owner names are
 * bound (`:1`, ...), never spliced.
 */
export function oracleIntrospectionQueries(schemas: readonly string[]): IntrospectionQueries {
  const list = placeholders(schemas);
  return {
    relations: {
      sql: `select OWNER as "schema_name", TABLE_NAME as "relation_name", 'table' as "relation_kind"
from ALL_TABLES
where OWNER in (${list}) and NESTED = 'NO' and SECONDARY = 'N' and DROPPED = 'NO'
union all
select OWNER, VIEW_NAME, 'view'
from ALL_VIEWS
where OWNER in (${list})
order by 1, 2`,
      bindings: [...schemas, ...schemas],
    },
    columns: {
      sql: `select OWNER as "schema_name", TABLE_NAME as "relation_name", COLUMN_NAME as "column_name",
  case
    when DATA_TYPE = 'NUMBER' and DATA_PRECISION is null and DATA_SCALE is null then 'NUMBER'
    when DATA_TYPE = 'NUMBER' then 'NUMBER(' || nvl(to_char(DATA_PRECISION), '*') || ',' || DATA_SCALE || ')'
    when DATA_TYPE = 'FLOAT' then 'FLOAT(' || DATA_PRECISION || ')'
    when DATA_TYPE in ('VARCHAR2', 'NVARCHAR2', 'CHAR', 'NCHAR') then DATA_TYPE || '(' || CHAR_LENGTH || ')'
    when DATA_TYPE = 'RAW' then 'RAW(' || DATA_LENGTH || ')'
    else DATA_TYPE
  end as "native_type",
  case when NULLABLE = 'Y' then 1 else 0 end as "is_nullable",
  COLUMN_ID as "ordinal"
from ALL_TAB_COLUMNS
where OWNER in (${list})
order by 1, 2, COLUMN_ID`,
      bindings: schemas,
    },
    keys: {
      // Primary and unique constraints, then unique indexes that back no constraint (not function-based).
      sql: `select c.OWNER as "schema_name", c.TABLE_NAME as "relation_name", c.CONSTRAINT_NAME as "constraint_name",
  lower(c.CONSTRAINT_TYPE) as "constraint_type", cc.COLUMN_NAME as "column_name", cc.POSITION as "position"
from ALL_CONSTRAINTS c
join ALL_CONS_COLUMNS cc on cc.OWNER = c.OWNER and cc.CONSTRAINT_NAME = c.CONSTRAINT_NAME and cc.TABLE_NAME = c.TABLE_NAME
where c.OWNER in (${list}) and c.CONSTRAINT_TYPE in ('P', 'U')
union all
select i.TABLE_OWNER, i.TABLE_NAME, i.INDEX_NAME, 'u', ic.COLUMN_NAME, ic.COLUMN_POSITION
from ALL_INDEXES i
join ALL_IND_COLUMNS ic on ic.INDEX_OWNER = i.OWNER and ic.INDEX_NAME = i.INDEX_NAME
where i.TABLE_OWNER in (${list}) and i.UNIQUENESS = 'UNIQUE' and i.INDEX_TYPE = 'NORMAL'
  and not exists (select 1 from ALL_CONSTRAINTS k
    where k.OWNER = i.TABLE_OWNER and k.TABLE_NAME = i.TABLE_NAME and k.INDEX_NAME = i.INDEX_NAME
      and k.CONSTRAINT_TYPE in ('P', 'U'))
order by 1, 2, 3, 6`,
      bindings: [...schemas, ...schemas],
    },
    foreignKeys: {
      sql: `select c.OWNER as "schema_name", c.TABLE_NAME as "relation_name", c.CONSTRAINT_NAME as "constraint_name",
  cc.COLUMN_NAME as "column_name", cc.POSITION as "position",
  r.OWNER as "ref_schema", r.TABLE_NAME as "ref_relation", rc.COLUMN_NAME as "ref_column"
from ALL_CONSTRAINTS c
join ALL_CONS_COLUMNS cc on cc.OWNER = c.OWNER and cc.CONSTRAINT_NAME = c.CONSTRAINT_NAME
join ALL_CONSTRAINTS r on r.OWNER = c.R_OWNER and r.CONSTRAINT_NAME = c.R_CONSTRAINT_NAME
join ALL_CONS_COLUMNS rc on rc.OWNER = r.OWNER and rc.CONSTRAINT_NAME = r.CONSTRAINT_NAME and rc.POSITION = cc.POSITION
where c.OWNER in (${list}) and c.CONSTRAINT_TYPE = 'R'
order by 1, 2, 3, 5`,
      bindings: schemas,
    },
    functions: {
      // Standalone functions and procedures (package members are not callable by a bare name).
      sql: `select distinct p.OWNER as "schema_name", p.OBJECT_NAME as "function_name",
  case when p.OBJECT_TYPE = 'PROCEDURE' then 'procedure' when p.AGGREGATE = 'YES' then 'aggregate' else 'function' end as "function_kind",
  a.DATA_TYPE as "return_type"
from ALL_PROCEDURES p
left join ALL_ARGUMENTS a on a.OWNER = p.OWNER and a.OBJECT_NAME = p.OBJECT_NAME and a.PACKAGE_NAME is null
  and a.POSITION = 0 and a.DATA_LEVEL = 0
where p.OWNER in (${list}) and p.OBJECT_TYPE in ('FUNCTION', 'PROCEDURE') and p.PROCEDURE_NAME is null
order by 1, 2`,
      bindings: schemas,
    },
  };
}
