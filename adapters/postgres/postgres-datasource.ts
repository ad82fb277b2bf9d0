import type { Knex } from 'knex';
import type { Catalog } from '../../core/catalog/catalog-types.js';
import { readCatalog } from '../../core/sql/catalog-assembly.js';
import type { QueryOptions, QueryResult } from '../../core/sql/dialect-contract.js';
import { KnexDatasource, type RowReader } from '../../core/sql/knex-datasource.js';
import { encodeResult } from '../../core/sql/value-encoding.js';
import { postgresIntrospectionQueries } from './postgres-introspector.js';
import { postgresCodec } from './postgres-types.js';

/** The part of a pg (or PGlite) result that knex.raw hands back. */
interface PgResult {
  rows: Record<string, unknown>[];
  fields: { name: string; dataTypeID: number }[];
  rowCount?: number | null;
}

/** knex.raw on pg returns one result, or one per statement when the text holds several. */
async function runRaw(knex: Knex, sql: string, bindings: readonly unknown[]): Promise<PgResult> {
  const raw = (await knex.raw(sql, bindings as Knex.RawBinding[])) as PgResult | PgResult[];
  const last = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return last ?? { rows: [], fields: [], rowCount: 0 };
}

/** A PostgreSQL datasource; PGlite extends it, as it speaks the same protocol and catalog. */
export class PostgresDatasource extends KnexDatasource {
  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const result = await runRaw(runner, sql, bindings);
    const columns = result.fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) }));
    return encodeResult(columns, result.rows, { maxRows: options.maxRows, affectedRows: result.rowCount ?? 0 });
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await runRaw(this.knex, sql, bindings)).rows;
    return readCatalog(schemas, postgresIntrospectionQueries(schemas), read, (type) => this.dialect.logicalType(type));
  }
}

/** `"order"`, with embedded quotes doubled. */
export function quotePostgresIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
