/**
 * PGlite parses with its own table (int8 → BigInt, date and timestamps → Date): override the same types as
 * for node-postgres (`TEXT_OIDS` of adapters/postgres/postgres-types.ts) so both give PostgreSQL's text.
 * Arrays follow their element's parser. Built in the worker thread from the OIDs the datasource sends, so
 * the worker loads PGlite and nothing of the core.
 */
export function pgliteTypeParsers(textOids: readonly number[]): Record<number, (value: string) => unknown> {
  return Object.fromEntries(textOids.map((oid) => [oid, (value: string) => value]));
}
