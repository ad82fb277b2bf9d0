import type { Knex } from 'knex';
import { readCatalog, KnexDatasource, encodeResult, type Catalog, type QueryOptions, type QueryResult, type RowReader } from '../../core/plugin-api/adapter-kit.js';
import { oracleIntrospectionQueries } from './oracle-introspector.js';
import { runOracleStatement } from './oracle-statement.js';
import { oracleCodec, oracleWithTimeZone } from './oracle-types.js';

export class OracleDatasource extends KnexDatasource {
  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    // One row beyond the limit tells whether the result was cut.
    const result = await runOracleStatement(runner, sql, bindings, options.maxRows === undefined ? 0 : options.maxRows + 1);
    const columns = result.columns.map((column) => ({ name: column.name, ...oracleCodec(column) }));
    return encodeResult(columns, result.rows, { maxRows: options.maxRows, maxBytes: options.maxBytes, affectedRows: result.rowsAffected });
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await runOracleStatement(this.knex, sql, bindings)).rows;
    return readCatalog(schemas, oracleIntrospectionQueries(schemas), read, {
      logicalType: (type) => this.dialect.logicalType(type),
      withTimeZone: oracleWithTimeZone,
    });
  }
}
