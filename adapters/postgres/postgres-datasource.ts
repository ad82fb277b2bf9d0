import { createHash } from 'node:crypto';
import { LruCache, readCatalog, KnexDatasource, encodeResult, type Catalog, type QueryOptions, type QueryResult, type RowReader } from '../../core/plugin-api/index.js';
import type { Knex } from 'knex';
import { postgresIntrospectionQueries } from './postgres-introspector.js';
import { postgresCodec } from './postgres-types.js';

/** The part of a pg result that knex.raw hands back. */
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

/** What the datasource uses of knex's pg client: its pool and its `?` → `$n` rewriting. */
interface KnexPgClient {
  acquireConnection(): Promise<{ query(query: { text: string; values: unknown[]; name?: string }): Promise<PgResult | PgResult[]> }>;
  releaseConnection(connection: unknown): Promise<void>;
  positionBindings(sql: string): string;
}

/**
 * `$n` texts by `?` text: endpoint queries repeat their text, so each is rewritten once, and prepared once
 * per connection under a name derived from it (the server then skips parsing and planning).
 */
const nativeTexts = new LruCache<string, { text: string; name: string | undefined }>(1_000);
/**
 * The server keeps a prepared statement for the life of the connection: at most this many distinct texts
 * are prepared (a caller looping over lists of every length must not fill the server's memory); later
 * texts run unnamed.
 */
const MAX_PREPARED_TEXTS = 500;
let preparedTexts = 0;
const MAX_CACHED_TEXT = 16_384;

/** A PostgreSQL datasource over knex's pg pool (PGlite reuses its introspection and type mapping). */
export class PostgresDatasource extends KnexDatasource {
  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const result = runner === this.knex ? await this.pooledQuery(sql, bindings) : await runRaw(runner, sql, bindings);
    const columns = result.fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) }));
    return encodeResult(columns, result.rows, { maxRows: options.maxRows, affectedRows: result.rowCount ?? 0 });
  }

  /**
   * A statement outside a transaction, on a pooled pg connection directly: knex.raw's query pipeline costs
   * about as much as a simple indexed query (bench/README.md). Transactions keep going through knex.
   */
  protected async pooledQuery(sql: string, bindings: readonly unknown[]): Promise<PgResult> {
    const client = this.knex.client as unknown as KnexPgClient;
    let native = nativeTexts.get(sql);
    if (native === undefined) {
      const text = client.positionBindings(sql);
      // only a statement with values is prepared: a text without them may hold several statements
      const prepared = bindings.length > 0 && sql.length <= MAX_CACHED_TEXT && preparedTexts < MAX_PREPARED_TEXTS;
      native = { text, name: prepared ? `vdb_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}` : undefined };
      if (prepared) preparedTexts += 1;
      if (sql.length <= MAX_CACHED_TEXT) nativeTexts.set(sql, native);
    }
    const connection = await client.acquireConnection();
    try {
      const values = [...bindings];
      let result: PgResult | PgResult[];
      try {
        result = await connection.query(native.name === undefined ? { text: native.text, values } : { text: native.text, name: native.name, values });
      } catch (error) {
        // DDL changed what a prepared statement returns: this connection's plan is stale, run it unnamed
        if (native.name === undefined || (error as { code?: unknown }).code !== '0A000') throw error;
        nativeTexts.set(sql, { text: native.text, name: undefined });
        result = await connection.query({ text: native.text, values });
      }
      // a text of several statements (no values) answers one result each, as knex.raw does
      return (Array.isArray(result) ? result.at(-1) : result) ?? { rows: [], fields: [], rowCount: 0 };
    } finally {
      await client.releaseConnection(connection);
    }
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await runRaw(this.knex, sql, bindings)).rows;
    return readCatalog(schemas, postgresIntrospectionQueries(schemas), read, (type) => this.dialect.logicalType(type));
  }
}
