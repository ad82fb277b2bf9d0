import { placeholders, type IntrospectionQueries } from '../../core/plugin-api/adapter-kit.js';

/**
 * Introspection of SQL Server from sys.* and INFORMATION_SCHEMA (native types with their lengths).
 * Schema names are bound (`@p0`, ...), never spliced.
 */
export function mssqlIntrospectionQueries(schemas: readonly string[]): IntrospectionQueries {
  const list = placeholders(schemas);
  return {
    relations: {
      sql: `select s.name as schema_name, o.name as relation_name,
  case when o.type = 'V' then 'view' else 'table' end as relation_kind
from sys.objects o
join sys.schemas s on s.schema_id = o.schema_id
where s.name in (${list}) and o.type in ('U', 'V') and o.is_ms_shipped = 0
order by 1, 2`,
      bindings: schemas,
    },
    columns: {
      sql: `select c.TABLE_SCHEMA as schema_name, c.TABLE_NAME as relation_name, c.COLUMN_NAME as column_name,
  c.DATA_TYPE + case
    when c.DATA_TYPE in ('char', 'varchar', 'nchar', 'nvarchar', 'binary', 'varbinary')
      then '(' + case when c.CHARACTER_MAXIMUM_LENGTH = -1 then 'max' else cast(c.CHARACTER_MAXIMUM_LENGTH as varchar(10)) end + ')'
    when c.DATA_TYPE in ('decimal', 'numeric')
      then '(' + cast(c.NUMERIC_PRECISION as varchar(10)) + ',' + cast(c.NUMERIC_SCALE as varchar(10)) + ')'
    when c.DATA_TYPE in ('datetime2', 'datetimeoffset', 'time')
      then '(' + cast(c.DATETIME_PRECISION as varchar(10)) + ')'
    else '' end as native_type,
  case when c.IS_NULLABLE = 'YES' then 1 else 0 end as is_nullable,
  c.ORDINAL_POSITION as ordinal
from INFORMATION_SCHEMA.COLUMNS c
where c.TABLE_SCHEMA in (${list})
order by 1, 2, c.ORDINAL_POSITION`,
      bindings: schemas,
    },
    keys: {
      // Primary keys, unique constraints and unique indexes alike are unique indexes; filtered ones are no keys.
      sql: `select s.name as schema_name, t.name as relation_name, i.name as constraint_name,
  case when i.is_primary_key = 1 then 'p' else 'u' end as constraint_type,
  c.name as column_name, ic.key_ordinal as position
from sys.indexes i
join sys.tables t on t.object_id = i.object_id
join sys.schemas s on s.schema_id = t.schema_id
join sys.index_columns ic on ic.object_id = i.object_id and ic.index_id = i.index_id and ic.key_ordinal > 0
join sys.columns c on c.object_id = ic.object_id and c.column_id = ic.column_id
where s.name in (${list}) and i.is_unique = 1 and i.has_filter = 0
order by 1, 2, 3, 6`,
      bindings: schemas,
    },
    foreignKeys: {
      sql: `select s.name as schema_name, t.name as relation_name, fk.name as constraint_name,
  c.name as column_name, fkc.constraint_column_id as position,
  rs.name as ref_schema, rt.name as ref_relation, rc.name as ref_column
from sys.foreign_keys fk
join sys.tables t on t.object_id = fk.parent_object_id
join sys.schemas s on s.schema_id = t.schema_id
join sys.foreign_key_columns fkc on fkc.constraint_object_id = fk.object_id
join sys.columns c on c.object_id = fkc.parent_object_id and c.column_id = fkc.parent_column_id
join sys.tables rt on rt.object_id = fkc.referenced_object_id
join sys.schemas rs on rs.schema_id = rt.schema_id
join sys.columns rc on rc.object_id = fkc.referenced_object_id and rc.column_id = fkc.referenced_column_id
where s.name in (${list})
order by 1, 2, 3, 5`,
      bindings: schemas,
    },
    functions: {
      // FN scalar, IF/TF table-valued, FS/FT CLR functions, AF CLR aggregates, P/PC procedures.
      sql: `select s.name as schema_name, o.name as function_name,
  case when o.type in ('P', 'PC') then 'procedure' when o.type = 'AF' then 'aggregate' else 'function' end as function_kind,
  case when o.type in ('P', 'PC') then '' else coalesce(r.DATA_TYPE, '') end as return_type
from sys.objects o
join sys.schemas s on s.schema_id = o.schema_id
left join INFORMATION_SCHEMA.ROUTINES r on r.SPECIFIC_SCHEMA = s.name and r.SPECIFIC_NAME = o.name
where s.name in (${list}) and o.type in ('FN', 'IF', 'TF', 'FS', 'FT', 'AF', 'P', 'PC') and o.is_ms_shipped = 0
order by 1, 2`,
      bindings: schemas,
    },
  };
}
