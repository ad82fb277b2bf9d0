import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';

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

/** A column of a RowDescription, as pg-protocol parses it. */
export interface FieldDescription {
  name: string;
  dataTypeID: number;
}

/** Where a RowsQuery hands what the server sends: a result's columns, its rows, the end of each statement. */
export interface RowSink {
  fields(fields: readonly FieldDescription[]): void;
  /** One row: the server's text per column, null for NULL. */
  row(values: readonly (string | null)[]): void;
  complete(): void;
}

/** The messages of pg's Connection that preparing a statement sends (untyped in @types/pg). */
interface PgConnection {
  bind(config: { portal: string; statement: string; values: unknown[]; binary: boolean | undefined; valueMapper: (value: unknown) => unknown }): void;
  close(config: { type: 'S'; name: string }): void;
  sync(): void;
}

/** pg.Query's members that RowsQuery uses and overrides; @types/pg declares only the event API. */
interface QueryInternals {
  /** The prepared statement's name (pg reads it; @types/pg does not declare it). */
  name: string | undefined;
  readonly portal: string;
  readonly values: unknown[];
  readonly binary: boolean | undefined;
  readonly rows: number | undefined;
  prepare(connection: PgConnection): void;
  hasBeenParsed(connection: PgConnection): boolean;
  handleError(error: unknown, connection: PgConnection): void;
  handleCommandComplete(message: unknown, connection: PgConnection): void;
  _getRows(connection: PgConnection, rows: number | undefined): void;
}
const PgQuery = pg.Query as unknown as new (text: string, values: unknown[]) => pg.Query & QueryInternals;

/** The columns of each prepared statement a connection described, by statement name. */
const described = new WeakMap<PgConnection, Map<string, readonly FieldDescription[]>>();

/**
 * Forgets that a pooled pg client's connection prepared `name`, which the server no longer has (26000:
 * deallocated behind the service's back), so that its next run parses it again.
 */
export function forgetPrepared(client: unknown, name: string): void {
  const { connection } = client as { connection: PgConnection & { parsedStatements: Record<string, string> } };
  delete connection.parsedStatements[name];
  described.get(connection)?.delete(name);
}

/**
 * A pg.Query (built from its text, not from a config object: pg copies a config object's every property
 * descriptor per query) that hands the rows to `sink` as the server's text instead of building pg's row
 * objects. pg's Result prepares a row template per RowDescription (a null-prototype object cloned with
 * `{ ...row }`, which V8 can only do in its runtime) and clones it again per row, for objects the
 * ResultBuilder copies anyway.
 *
 * A prepared statement is described once per connection: later runs send Bind, Execute and Sync, and take
 * the columns the first Describe answered. Its columns change only with DDL, and then the server refuses
 * the statement (0A000) before any row, which the datasource answers by running it unnamed.
 */
export class RowsQuery extends PgQuery {
  private preparedOn: PgConnection | undefined;

  constructor(statement: NativeStatement, private readonly sink: RowSink) {
    super(statement.text, statement.values);
    // a named query is prepared once per connection
    if (statement.name !== undefined) this.name = statement.name;
  }

  /** pg's prepare, without the Describe where this connection already described the statement. */
  override prepare(connection: PgConnection): void {
    const { name } = this;
    const fields = name === undefined ? undefined : described.get(connection)?.get(name);
    if (name === undefined || fields === undefined || !this.hasBeenParsed(connection)) {
      this.preparedOn = connection;
      super.prepare(connection);
      return;
    }
    try {
      connection.bind({ portal: this.portal, statement: name, values: this.values, binary: this.binary, valueMapper: pgUtils.prepareValue });
    } catch (error) {
      // as pg does: a value that cannot be sent closes the statement and leaves the connection usable
      connection.close({ type: 'S', name });
      connection.sync();
      this.handleError(error, connection);
      return;
    }
    this.sink.fields(fields);
    this._getRows(connection, this.rows);
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const { preparedOn: connection, name } = this;
    if (connection !== undefined && name !== undefined) {
      let statements = described.get(connection);
      if (statements === undefined) described.set(connection, (statements = new Map()));
      statements.set(name, message.fields);
    }
    this.sink.fields(message.fields);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    this.sink.row(message.fields);
  }

  override handleCommandComplete(message: unknown, connection: PgConnection): void {
    super.handleCommandComplete(message, connection);
    this.sink.complete();
  }
}
