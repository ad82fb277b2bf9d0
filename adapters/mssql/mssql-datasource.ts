import type { Knex } from 'knex';
import { readCatalog, KnexDatasource, encodeResult, type Catalog, type QueryOptions, type QueryResult, type RowReader } from '../../core/plugin-api/adapter-kit.js';
import { mssqlIntrospectionQueries } from './mssql-introspector.js';
import { runTediousRequest } from './mssql-request.js';
import { mssqlCodec, mssqlWithTimeZone } from './mssql-types.js';

export class MssqlDatasource extends KnexDatasource {
  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    // One row beyond the limit tells whether the result was cut.
    const keep = options.maxRows === undefined ? undefined : options.maxRows + 1;
    const result = await runTediousRequest(runner, sql, bindings, keep);
    const columns = result.columns.map((column) => ({ name: column.colName, ...mssqlCodec(column) }));
    return encodeResult(columns, result.rows, { maxRows: options.maxRows, maxBytes: options.maxBytes, affectedRows: result.rowCount });
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await runTediousRequest(this.knex, sql, bindings)).rows;
    return readCatalog(schemas, mssqlIntrospectionQueries(schemas), read, {
      logicalType: (type) => this.dialect.logicalType(type),
      withTimeZone: mssqlWithTimeZone,
    });
  }
}
