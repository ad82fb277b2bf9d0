import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** What a statement answered, as PostgreSQL's text forms: the type OID of each column and the rows. */
export interface TextAnswer {
  types: number[];
  rows: (string | null)[][];
}

/**
 * The oracle: one PostgreSQL database, collation "C", holding copies of every table of the corpus, in a
 * session whose time zone is UTC (the adapters' sessions are).
 */
export interface Oracle {
  /** `sql` with its bound values (`$1`…), sent as node-postgres sends them (text, typed by the statement). */
  run(sql: string, values?: readonly unknown[]): Promise<TextAnswer>;
  close(): Promise<void>;
}

const TEXT_TYPES = [16, 17, 19, 20, 21, 23, 25, 26, 114, 700, 701, 1042, 1043, 1082, 1083, 1114, 1184, 1186, 1700, 2950, 3802];
const asText = (value: string) => value;

/** node-postgres options that keep every value as the server's text. */
export const TEXT_PARSERS = { getTypeParser: () => asText } as unknown as pg.CustomTypesConfig;

/** A client of `url` whose values stay text and whose session runs in UTC. */
export function textClient(url: string, overrides: pg.ClientConfig = {}): pg.Client {
  return new pg.Client({ connectionString: url, types: TEXT_PARSERS, options: '-c TimeZone=UTC', ...overrides });
}

export async function textAnswer(client: pg.Client, sql: string, values: readonly unknown[] = []): Promise<TextAnswer> {
  const result = await client.query({ text: sql, values: [...values], rowMode: 'array' });
  return { types: result.fields.map((field) => field.dataTypeID), rows: result.rows as (string | null)[][] };
}

/** A database `name` of the PostgreSQL server at `url`, created afresh with collation C; its URL. */
export async function freshDatabase(url: string, name: string, collation?: 'C'): Promise<string> {
  const admin = textClient(url);
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}${collation ? ` template template0 encoding 'UTF8' lc_collate '${collation}' lc_ctype '${collation}'` : ''}`);
  } finally {
    await admin.end();
  }
  const at = new URL(url);
  at.pathname = `/${name}`;
  return at.toString();
}

export async function dropDatabase(url: string, name: string): Promise<void> {
  const admin = textClient(url);
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`).finally(() => admin.end());
}

/** The oracle on a database `name` of a PostgreSQL server (created with collation C, filled by `setup`). */
export async function serverOracle(url: string, setup: readonly string[], name = 'fed_oracle'): Promise<Oracle> {
  const at = await freshDatabase(url, name, 'C');
  const client = textClient(at);
  await client.connect();
  for (const statement of setup) await client.query(statement);
  return {
    run: (sql, values) => textAnswer(client, sql, values),
    close: async () => {
      await client.end();
      await dropDatabase(url, name);
    },
  };
}

/**
 * The oracle in an embedded PGlite of its own, in a temporary folder. PGlite's database has collation C but
 * character type C.UTF-8 (`upper('é')` is `É` there, `é` under collation C): the type is set to C and the
 * database opened again, as a backend reads it when it starts.
 */
export async function pgliteOracle(setup: readonly string[]): Promise<Oracle> {
  const folder = mkdtempSync(join(tmpdir(), 'vdb-oracle-'));
  const first = await PGlite.create(folder);
  await first.exec("update pg_database set datctype = 'C' where datname = current_database()");
  await first.close();
  const db = await PGlite.create(folder);
  const locale = await db.query<{ datcollate: string; datctype: string }>('select datcollate, datctype from pg_database where datname = current_database()');
  if (locale.rows[0]?.datcollate !== 'C' || locale.rows[0]?.datctype !== 'C') throw new Error(`the PGlite oracle's collation is not C: ${JSON.stringify(locale.rows[0])}`);
  await db.exec("set timezone to 'UTC'");
  for (const statement of setup) await db.exec(statement);
  const parsers = Object.fromEntries(TEXT_TYPES.map((oid) => [oid, asText]));
  return {
    run: async (sql, values = []) => {
      // as node-postgres sends them: text, typed by the statement
      const texts = values.map((value) => (value === null ? null : String(value)));
      const result = await db.query<unknown[]>(sql, texts, { rowMode: 'array', parsers });
      return { types: result.fields.map((field) => field.dataTypeID), rows: result.rows as (string | null)[][] };
    },
    close: async () => {
      await db.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * The logical type of a PostgreSQL type, as the type the SQL door sends for it (docs/sql.md#types): the
 * answer's columns are compared by it.
 */
export function logicalOid(oid: number): number {
  const same: Record<number, number> = { 21: 23, 1042: 25, 1043: 25, 19: 25, 700: 701, 3802: 114 };
  return same[oid] ?? oid;
}

/**
 * A value as the door sends it: a decimal's canonical form (`12.5`, not `12.50`, docs/logical-types.md);
 * every other type's text as PostgreSQL writes it.
 */
export function canonicalValue(value: string | null, oid: number): string | null {
  if (value === null || oid !== 1700 || !value.includes('.')) return value;
  const trimmed = value.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' ? '0' : trimmed;
}

const LOGICAL_TYPES: Record<number, string> = {
  16: 'boolean', 20: 'bigint', 21: 'integer', 23: 'integer', 25: 'string', 114: 'json', 700: 'float', 701: 'float', 1042: 'string', 1043: 'string',
  1082: 'date', 1083: 'time', 1114: 'timestamp', 1184: 'timestamp', 1700: 'decimal', 2950: 'uuid', 3802: 'json',
};

/** The logical type of a PostgreSQL type (docs/logical-types.md). */
export function logicalTypeOf(oid: number): string {
  return LOGICAL_TYPES[oid] ?? `type ${oid}`;
}

/** A value of PostgreSQL's text form as the JSON of its logical type (docs/logical-types.md#json-encoding). */
export function jsonValue(value: string | null, oid: number): unknown {
  if (value === null) return null;
  switch (logicalTypeOf(oid)) {
    case 'integer': return Number(value);
    // NaN and the infinities as strings (docs/logical-types.md)
    case 'float': return ['NaN', 'Infinity', '-Infinity'].includes(value) ? value : Number(value);
    case 'boolean': return value === 't';
    case 'decimal': return canonicalValue(value, 1700);
    case 'timestamp': {
      const [date, time = ''] = value.split(' ');
      const zone = oid === 1184 ? /[+-]\d\d(:\d\d)?$/.exec(time)?.[0] : undefined;
      if (zone !== undefined && zone !== '+00') throw new Error(`the oracle's session is not in UTC: ${value}`);
      const clock = zone === undefined ? time : time.slice(0, -zone.length);
      return `${date}T${clock}${oid === 1184 ? 'Z' : ''}`;
    }
    default: return value;
  }
}
