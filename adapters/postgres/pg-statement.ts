import pg from 'pg';

/** The part of a pg result that knex.raw hands back (an array of them for a text of several statements). */
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

/**
 * The pg.Query of `statement`, built from its text, not from a config object: pg copies a config object's
 * every property descriptor per query (`cloneQueryConfig`), which cost more than the rest of the driver's
 * work on a one-row lookup (bench/README.md, the peers benchmark).
 */
export function pgQuery(statement: NativeStatement): pg.Query {
  const query = new pg.Query(statement.text, statement.values);
  // a named query is prepared once per connection; @types/pg does not declare the field pg reads
  if (statement.name !== undefined) (query as unknown as { name: string }).name = statement.name;
  return query;
}
