import type { Knex } from 'knex';
import type { BuiltStatement, PoolUsage, TableFilter, TableFilterOperation, TableStatement } from '../plugin-api/sql-dialect.js';

const COMPARISONS: Partial<Record<TableFilterOperation, string>> = {
  EQUAL: '=', NOT_EQUAL: '<>', GREATER_THAN: '>', GREATER_THAN_OR_EQUAL: '>=', LESS_THAN: '<', LESS_THAN_OR_EQUAL: '<=', LIKE: 'like',
};

/**
 * `Datasource.buildStatement` with knex's query builder for the datasource's client: the dialect's quoting,
 * row limit and placeholders, values bound.
 */
export function buildTableStatement(knex: Knex, statement: TableStatement): BuiltStatement {
  const { schema, name } = statement.table;
  switch (statement.kind) {
    case 'exists':
      return built(filtered(knex.withSchema(schema).from(name).select(knex.raw('1 as present')), statement.filters).limit(1));
    case 'first':
      return built(filtered(knex.withSchema(schema).from(name).select([...statement.columns]), statement.filters).limit(1));
    case 'insert':
      return built(knex.withSchema(schema).table(name).insert({ ...statement.values }));
    case 'update':
      return built(filtered(knex.withSchema(schema).table(name), statement.filters).update({ ...statement.values }));
    case 'delete':
      return built(filtered(knex.withSchema(schema).table(name), statement.filters).delete());
  }
}

function filtered(query: Knex.QueryBuilder, filters: readonly TableFilter[]): Knex.QueryBuilder {
  for (const { column, operation, value } of filters) {
    switch (operation) {
      case 'IN':
        query.whereIn(column, value as Knex.Value[]);
        break;
      case 'NOT_IN':
        query.whereNotIn(column, value as Knex.Value[]);
        break;
      case 'IS_NULL':
        query.whereNull(column);
        break;
      case 'IS_NOT_NULL':
        query.whereNotNull(column);
        break;
      default:
        query.where(column, COMPARISONS[operation] as string, value as Knex.Value);
    }
  }
  return query;
}

function built(query: Knex.QueryBuilder): BuiltStatement {
  const { sql, bindings } = query.toSQL();
  return { sql, bindings: [...bindings] };
}

/** The part of knex's pool (tarn) read here. */
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** `Datasource.poolUsage` of a knex pool, read from tarn's counters (no query); undefined when knex has no such pool. */
export function knexPoolUsage(knex: Knex): PoolUsage | undefined {
  const pool = (knex.client as { pool?: Partial<TarnPool> } | undefined)?.pool;
  if (typeof pool?.numUsed !== 'function' || typeof pool.numFree !== 'function' || typeof pool.numPendingAcquires !== 'function') return undefined;
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() };
}
