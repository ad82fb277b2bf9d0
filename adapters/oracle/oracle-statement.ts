import type { Knex } from 'knex';
import type { OracleColumn } from './oracle-types.js';

/** An oracledb connection, as far as it is used here (oracledb ships no type declarations). */
export interface OracleConnection {
  execute(sql: string, binds?: readonly unknown[], options?: Record<string, unknown>): Promise<{
    rows?: Record<string, unknown>[];
    metaData?: OracleColumn[];
    rowsAffected?: number;
  }>;
}

/** The oracledb module constants used here. */
interface OracleDriver {
  OUT_FORMAT_OBJECT: number;
  STRING: unknown;
  BUFFER: unknown;
  DB_TYPE_NUMBER: unknown;
  DB_TYPE_DATE: unknown;
  DB_TYPE_TIMESTAMP: unknown;
  DB_TYPE_TIMESTAMP_TZ: unknown;
  DB_TYPE_TIMESTAMP_LTZ: unknown;
  DB_TYPE_CLOB: unknown;
  DB_TYPE_NCLOB: unknown;
  DB_TYPE_BLOB: unknown;
}

/** knex's oracledb client: its driver module and its pool. */
interface KnexOracleClient {
  driver: OracleDriver;
  acquireConnection(): Promise<OracleConnection>;
  releaseConnection(connection: OracleConnection): Promise<unknown>;
}

/**
 * Session settings of every pooled connection: UTC, and the text forms value-encoding reads, since dates and
 * timestamps are fetched as text (a Date in the process time zone loses microseconds and shifts across
 * daylight-saving gaps).
 */
export const ORACLE_SESSION_SQL = `alter session set
  time_zone = 'UTC'
  nls_date_format = 'YYYY-MM-DD HH24:MI:SS'
  nls_timestamp_format = 'YYYY-MM-DD HH24:MI:SS.FF9'
  nls_timestamp_tz_format = 'YYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM'
  nls_numeric_characters = '.,'`;

export interface OracleResult {
  columns: OracleColumn[];
  rows: Record<string, unknown>[];
  rowsAffected: number;
}

/**
 * Runs one statement with `?` bindings (read by knex.raw as on every dialect, then numbered `:1`...),
 * fetching numbers, dates and LOBs as text or bytes so nothing is rounded or shifted. `maxRows` makes the
 * driver stop fetching (0: all rows).
 */
export async function runOracleStatement(knex: Knex, sql: string, bindings: readonly unknown[], maxRows = 0): Promise<OracleResult> {
  const native = knex.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
  const client = knex.client as unknown as KnexOracleClient;
  const driver = client.driver;
  const asText = new Set([driver.DB_TYPE_NUMBER, driver.DB_TYPE_DATE, driver.DB_TYPE_TIMESTAMP, driver.DB_TYPE_TIMESTAMP_TZ,
    driver.DB_TYPE_TIMESTAMP_LTZ, driver.DB_TYPE_CLOB, driver.DB_TYPE_NCLOB]);
  const connection = await client.acquireConnection();
  try {
    const result = await connection.execute(native.sql, native.bindings, {
      outFormat: driver.OUT_FORMAT_OBJECT,
      autoCommit: true,
      maxRows,
      fetchTypeHandler: (column: { dbType: unknown }) => {
        if (asText.has(column.dbType)) return { type: driver.STRING };
        if (column.dbType === driver.DB_TYPE_BLOB) return { type: driver.BUFFER };
        return undefined;
      },
    });
    return { columns: result.metaData ?? [], rows: result.rows ?? [], rowsAffected: result.rowsAffected ?? 0 };
  } finally {
    await client.releaseConnection(connection);
  }
}
