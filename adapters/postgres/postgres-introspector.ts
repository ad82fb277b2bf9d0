import { placeholders, type IntrospectionQueries } from '../../core/plugin-api/adapter-kit.js';

/**
 * Introspection of PostgreSQL (and PGlite) from pg_catalog, which, unlike information_schema, also shows
 * objects the current role does not own, unique indexes without a constraint, and procedure kinds.
 * Schema names are bound, never spliced.
 */

/** Tables (plain, partitioned, foreign), views and materialized views; partitions are left out (their parent is listed). */
const RELATION_FILTER = `c.relkind in ('r', 'p', 'f', 'v', 'm') and not c.relispartition`;

export function postgresIntrospectionQueries(schemas: readonly string[]): IntrospectionQueries {
  const inSchemas = `n.nspname in (${placeholders(schemas)})`;
  return {
    relations: {
      sql: `select n.nspname as schema_name, c.relname as relation_name,
  case when c.relkind in ('v', 'm') then 'view' else 'table' end as relation_kind
from pg_catalog.pg_class c
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
where ${inSchemas} and ${RELATION_FILTER}
order by 1, 2`,
      bindings: schemas,
    },
    columns: {
      // A domain maps by its base type; its NOT NULL counts like the column's.
      sql: `select n.nspname as schema_name, c.relname as relation_name, a.attname as column_name,
  pg_catalog.format_type(a.atttypid, a.atttypmod) as native_type,
  case when t.typtype = 'd' then pg_catalog.format_type(t.typbasetype, t.typtypmod) end as base_type,
  not (a.attnotnull or (t.typtype = 'd' and t.typnotnull)) as is_nullable,
  a.attnum as ordinal
from pg_catalog.pg_attribute a
join pg_catalog.pg_class c on c.oid = a.attrelid
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
join pg_catalog.pg_type t on t.oid = a.atttypid
where ${inSchemas} and ${RELATION_FILTER} and a.attnum > 0 and not a.attisdropped
order by 1, 2, a.attnum`,
      bindings: schemas,
    },
    keys: {
      // Primary and unique constraints, then unique indexes that back no constraint (not partial, no expressions).
      sql: `select n.nspname as schema_name, c.relname as relation_name, con.conname as constraint_name,
  con.contype::text as constraint_type, a.attname as column_name, k.position
from pg_catalog.pg_constraint con
join pg_catalog.pg_class c on c.oid = con.conrelid
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
cross join lateral unnest(con.conkey) with ordinality as k(attnum, position)
join pg_catalog.pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum
where ${inSchemas} and con.contype in ('p', 'u')
union all
select n.nspname, c.relname, i.relname, 'u', a.attname, k.position
from pg_catalog.pg_index x
join pg_catalog.pg_class i on i.oid = x.indexrelid
join pg_catalog.pg_class c on c.oid = x.indrelid
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
cross join lateral unnest(x.indkey::int2[]) with ordinality as k(attnum, position)
join pg_catalog.pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.attnum
where ${inSchemas} and x.indisunique and not x.indisprimary and x.indpred is null and x.indexprs is null
  and not exists (select 1 from pg_catalog.pg_constraint con where con.conindid = x.indexrelid)
order by 1, 2, 3, 6`,
      bindings: [...schemas, ...schemas],
    },
    foreignKeys: {
      sql: `select n.nspname as schema_name, c.relname as relation_name, con.conname as constraint_name,
  a.attname as column_name, k.position, rn.nspname as ref_schema, rc.relname as ref_relation, ra.attname as ref_column
from pg_catalog.pg_constraint con
join pg_catalog.pg_class c on c.oid = con.conrelid
join pg_catalog.pg_namespace n on n.oid = c.relnamespace
join pg_catalog.pg_class rc on rc.oid = con.confrelid
join pg_catalog.pg_namespace rn on rn.oid = rc.relnamespace
cross join lateral unnest(con.conkey, con.confkey) with ordinality as k(attnum, ref_attnum, position)
join pg_catalog.pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum
join pg_catalog.pg_attribute ra on ra.attrelid = con.confrelid and ra.attnum = k.ref_attnum
where ${inSchemas} and con.contype = 'f'
order by 1, 2, 3, 5`,
      bindings: schemas,
    },
    functions: {
      // User functions only: not those of an extension, not trigger functions (they cannot be called in a query).
      sql: `select distinct n.nspname as schema_name, p.proname as function_name,
  case p.prokind when 'a' then 'aggregate' when 'p' then 'procedure' else 'function' end as function_kind,
  case when p.prokind = 'p' then '' else pg_catalog.format_type(p.prorettype, null) end as return_type,
  coalesce((select pg_catalog.string_agg(pg_catalog.format_type(a.type, null), ';' order by a.at)
    from pg_catalog.unnest(p.proargtypes::pg_catalog.oid[]) with ordinality as a(type, at)), '') as argument_types
from pg_catalog.pg_proc p
join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where ${inSchemas}
  and p.prorettype not in ('pg_catalog.trigger'::pg_catalog.regtype, 'pg_catalog.event_trigger'::pg_catalog.regtype)
  and not exists (select 1 from pg_catalog.pg_depend d
    where d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass and d.objid = p.oid and d.deptype = 'e')
order by 1, 2`,
      bindings: schemas,
    },
  };
}
