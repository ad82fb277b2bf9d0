import pg from 'pg';

/** One pg result, as the callback of a pg.Query hands it (an array of them for a text of several statements). */
export interface PgResult {
  rows: Record<string, unknown>[];
  fields: { name: string; dataTypeID: number }[];
  rowCount?: number | null;
}

/** A pooled pg client: it runs a Submittable (pg.Query). */
export interface PgStatementClient {
  query(query: pg.Query): unknown;
}

/**
 * Runs `$n` text with its values on `client`, as the prepared statement `name` when one is given. The
 * pg.Query is built from the text, not from a config object: pg copies a config object's every property
 * descriptor per query (`cloneQueryConfig`), which cost more than the rest of the driver's work on a
 * one-row lookup (bench/README.md).
 */
export function runStatement(client: PgStatementClient, text: string, name: string | undefined, values: unknown[]): Promise<PgResult | PgResult[]> {
  return new Promise((resolve, reject) => {
    const query = new pg.Query(text, values, (error, result) => (error ? reject(error) : resolve(result as unknown as PgResult | PgResult[])));
    // a named query is prepared once per connection; @types/pg does not declare the field pg reads
    if (name !== undefined) (query as unknown as { name: string }).name = name;
    client.query(query);
  });
}
