import pg from 'pg';

/** One pg result, as the callback of a pg.Query hands it (an array of them for a text of several statements). */
export interface PgResult {
  rows: Record<string, unknown>[];
  fields: { name: string; dataTypeID: number }[];
  rowCount?: number | null;
}

/** One statement as pg sends it: `$n` text, its values, and a name when it is prepared. */
export interface NativeStatement {
  text: string;
  values: unknown[];
  name?: string | undefined;
}

/** A pooled pg client: it runs a Submittable (pg.Query). */
export interface PgStatementClient {
  query(query: pg.Query): unknown;
}

/**
 * The pg.Query of `statement`, built from its text, not from a config object: pg copies a config object's
 * every property descriptor per query (`cloneQueryConfig`), which cost more than the rest of the driver's
 * work on a one-row lookup (bench/README.md, the peers benchmark).
 */
export function pgQuery(statement: NativeStatement, callback?: (error: Error | undefined, result: unknown) => void): pg.Query {
  const query = new pg.Query(statement.text, statement.values, callback);
  // a named query is prepared once per connection; @types/pg does not declare the field pg reads
  if (statement.name !== undefined) (query as unknown as { name: string }).name = statement.name;
  return query;
}

/** Runs `statement` on `client`; a text of several statements (no values) answers one result each. */
export function runStatement(client: PgStatementClient, statement: NativeStatement): Promise<PgResult | PgResult[]> {
  return new Promise((resolve, reject) => {
    client.query(pgQuery(statement, (error, result) => (error ? reject(error) : resolve(result as PgResult | PgResult[]))));
  });
}
