import { TEXT_OIDS } from '../postgres/postgres-types.js';

/**
 * PGlite parses with its own table (int8 → BigInt, date and timestamps → Date): override the same types as
 * for node-postgres so both give PostgreSQL's text. Arrays follow their element's parser.
 */
export const pgliteTypeParsers: Record<number, (value: string) => unknown> = Object.fromEntries(
  TEXT_OIDS.map((oid) => [oid, (value: string) => value]),
);
