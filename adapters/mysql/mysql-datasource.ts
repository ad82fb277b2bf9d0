import type { Knex } from 'knex';
import { readCatalog, KnexDatasource, encodeResult, type Catalog, type QueryOptions, type QueryResult, type RowReader } from '../../core/plugin-api/index.js';
import { mysqlIntrospectionQueries } from './mysql-introspector.js';
import { mysqlCodec, type MysqlField } from './mysql-types.js';

/**
 * knex.raw on mysql2 returns `[rows, fields]`; a statement without a result set gives a header instead of
 * rows, and a CALL gives one `[rows, fields]` pair per result set, nested.
 */
type MysqlRows = Record<string, unknown>[] | { affectedRows?: number };
type MysqlRaw = [MysqlRows | MysqlRows[], MysqlField[] | MysqlField[][] | undefined];

/** The first result set of a raw response. */
function firstResult([rows, fields]: MysqlRaw): [MysqlRows, MysqlField[] | undefined] {
  if (Array.isArray(fields) && Array.isArray(fields[0])) {
    return [(rows as MysqlRows[])[0] ?? [], fields[0]];
  }
  return [rows as MysqlRows, fields as MysqlField[] | undefined];
}

export class MysqlDatasource extends KnexDatasource {
  private mariadb: Promise<boolean> | undefined;

  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const [rows, fields] = await this.run(sql, bindings, runner);
    if (!Array.isArray(rows) || !fields) {
      return encodeResult([], [], { affectedRows: Array.isArray(rows) ? 0 : (rows.affectedRows ?? 0) });
    }
    const columns = fields.map((field) => ({ name: field.name, ...mysqlCodec(field) }));
    return encodeResult(columns, rows, { maxRows: options.maxRows });
  }

  async introspect(schemas: readonly string[]): Promise<Catalog> {
    const mariadb = await this.isMariadb();
    const read: RowReader = async ({ sql, bindings }) => {
      const [rows] = await this.run(sql, bindings);
      return Array.isArray(rows) ? rows : [];
    };
    return readCatalog(schemas, mysqlIntrospectionQueries(schemas, { mariadb }), read, (type) => this.dialect.logicalType(type));
  }

  private async run(sql: string, bindings: readonly unknown[], runner: Knex = this.knex): Promise<[MysqlRows, MysqlField[] | undefined]> {
    return firstResult((await runner.raw(sql, bindings as Knex.RawBinding[])) as MysqlRaw);
  }

  /** MariaDB reports JSON columns differently (see mysql-introspector.ts). */
  private async isMariadb(): Promise<boolean> {
    this.mariadb ??= this.run('select version() as version', []).then(
      ([rows]) => Array.isArray(rows) && String(rows[0]?.['version'] ?? '').includes('MariaDB'),
      (error: unknown) => {
        this.mariadb = undefined; // ask again next time
        throw error;
      },
    );
    return this.mariadb;
  }
}
