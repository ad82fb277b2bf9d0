import type { JsonValue, QueryResult } from '../plugin-api/sql-dialect.js';
import { encodeValue, type ColumnCodec } from './value-encoding.js';

/** Where a result stops: a row limit, a byte budget, or neither. */
export interface ResultLimits {
  maxRows?: number | undefined;
  /** The budget of the rows' JSON (`JSON.stringify(rows)`, in UTF-8 bytes), as the caller will send it. */
  maxBytes?: number | undefined;
}

/**
 * Builds a QueryResult row by row as a driver hands the rows over, encoding each (value-encoding.ts) and
 * keeping it only while the result stays within its limits. `add` answers false once the result is cut:
 * the driver may stop reading, and a server may cancel the statement. The bytes counted are exactly those
 * of `JSON.stringify(rows)`, so a task's observation budget and an endpoint's answer measure the same thing.
 */
export class ResultBuilder {
  private readonly rows: Record<string, JsonValue>[] = [];
  /** `[]`, then each row and the comma before it. */
  private bytes = 2;
  private cut: QueryResult['truncatedBy'];

  constructor(private readonly columns: readonly ColumnCodec[], private readonly limits: ResultLimits = {}) {}

  /** True once a limit cut the result: later rows are ignored. */
  get done(): boolean {
    return this.cut !== undefined;
  }

  /** Keeps one row of the driver's, by column name; false once the result is cut (this row is then not kept). */
  add(row: Readonly<Record<string, unknown>>): boolean {
    if (!this.open()) return false;
    const encoded: Record<string, JsonValue> = {};
    for (const column of this.columns) encoded[column.name] = encodeValue(row[column.name], column);
    return this.keep(encoded);
  }

  /** The same for a row of values in column order (a driver that hands over the server's values as they came). */
  addValues(values: readonly unknown[]): boolean {
    if (!this.open()) return false;
    const encoded: Record<string, JsonValue> = {};
    for (let at = 0; at < this.columns.length; at++) {
      const column = this.columns[at] as ColumnCodec;
      encoded[column.name] = encodeValue(values[at], column);
    }
    return this.keep(encoded);
  }

  private open(): boolean {
    if (this.cut !== undefined) return false;
    const { maxRows } = this.limits;
    if (maxRows !== undefined && this.rows.length >= maxRows) {
      this.cut = 'maxRows';
      return false;
    }
    return true;
  }

  private keep(encoded: Record<string, JsonValue>): boolean {
    const { maxBytes } = this.limits;
    if (maxBytes !== undefined) {
      const bytes = this.bytes + Buffer.byteLength(JSON.stringify(encoded)) + (this.rows.length > 0 ? 1 : 0);
      if (bytes > maxBytes) {
        this.cut = 'maxBytes';
        return false;
      }
      this.bytes = bytes;
    }
    this.rows.push(encoded);
    return true;
  }

  /**
   * The result. `affectedRows` is the rowCount of a statement that returns no columns (DML); one that
   * returns columns counts the rows kept.
   */
  result(affectedRows = 0): QueryResult {
    const zoned = this.columns.filter((column) => column.withTimeZone === true && column.logicalType === 'timestamp');
    return {
      columns: this.columns.map(({ name, logicalType }) => ({ name, logicalType })),
      rows: this.rows,
      rowCount: this.columns.length > 0 ? this.rows.length : affectedRows,
      truncated: this.cut !== undefined,
      ...(this.cut === undefined ? {} : { truncatedBy: this.cut }),
      ...(zoned.length > 0 && { withTimeZone: zoned.map((column) => column.name) }),
    };
  }
}

/**
 * A QueryResult from a driver's rows, all at hand. `affectedRows` is the rowCount of a statement that
 * returns no columns (DML); a statement that returns columns counts the rows it returned.
 */
export function encodeResult(
  columns: readonly ColumnCodec[],
  rows: readonly Record<string, unknown>[],
  options: ResultLimits & { affectedRows?: number | undefined } = {},
): QueryResult {
  const builder = new ResultBuilder(columns, options);
  for (const row of rows) if (!builder.add(row)) break;
  return builder.result(options.affectedRows);
}
