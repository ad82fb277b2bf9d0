/**
 * A session's cursors (`DECLARE … CURSOR`, `FETCH`, `MOVE`, `CLOSE`; docs/sql.md#cursors), with
 * PostgreSQL's positions and directions. A cursor reads its rows from a `CursorSource` as they are asked
 * for: a cursor on the datasource (PostgreSQL: `Datasource.openCursor`) or, elsewhere, the query's result
 * read whole within the result budget. Only a SCROLL cursor keeps the rows it has read, to move back.
 */
import type { CursorDeclaration, FetchDirection } from './session-commands.js';
import { WireError } from './wire-errors.js';
import type { FieldDescription } from './wire-messages.js';

type Row = (string | null)[];

/** Rows in PostgreSQL's text form and their columns (the runner's ResultSet). */
interface Rows {
  fields: FieldDescription[];
  rows: Row[];
}

/** Where a cursor's rows come from, in order, each once. */
export interface CursorSource {
  readonly fields: FieldDescription[];
  /** The next rows, at most `count` (Infinity: the rest); fewer means the end. */
  next(count: number, signal: AbortSignal): Promise<Row[]>;
  close(): Promise<void>;
}

/** A result already read whole, as a source. */
export function bufferedSource(result: Rows): CursorSource {
  let at = 0;
  return {
    fields: result.fields,
    next: (count) => {
      const rows = result.rows.slice(at, Number.isFinite(count) ? at + count : undefined);
      at += rows.length;
      return Promise.resolve(rows);
    },
    close: () => Promise.resolve(),
  };
}

/** How many cursors a session may hold open: each may hold a datasource connection. */
export const MAX_CURSORS = 4;
/** MOVE reads past rows in batches of this many. */
const MOVE_BATCH = 1_000;

class Cursor {
  /** 0: before the first row; 1..n: on row n; `read + 1` once the end was passed. */
  private position = 0;
  /** Rows taken from the source so far. */
  private read = 0;
  private ended = false;
  /** What a SCROLL cursor has read (row n at n - 1), and their bytes, bounded by the result budget. */
  private readonly kept: Row[] = [];
  private keptBytes = 0;

  constructor(
    readonly declaration: CursorDeclaration,
    readonly source: CursorSource,
    /** Declared inside the transaction block now open: a rollback ends it even WITH HOLD. */
    readonly inTransaction: boolean,
    private readonly maxKeptBytes: number,
  ) {}

  get fields(): FieldDescription[] {
    return this.source.fields;
  }

  /** FETCH (rows) or MOVE (their count only) in `direction`, PostgreSQL's way. */
  async fetch(direction: FetchDirection, move: boolean, signal: AbortSignal): Promise<{ rows: Row[]; count: number }> {
    const { kind, count } = direction;
    if ((kind === 'forward' && count < 0) || (kind === 'backward' && count < 0)) {
      return this.fetch({ kind: kind === 'forward' ? 'backward' : 'forward', count: -count }, move, signal);
    }
    if ((kind === 'forward' || kind === 'backward') && count === 0) return this.fetch({ kind: 'relative', count: 0 }, move, signal);
    switch (kind) {
      case 'forward': return this.forward(count, move, signal);
      case 'backward': return this.backward(count, move);
      case 'absolute': return this.single(count >= 0 ? count : await this.fromEnd(count, signal), move, signal);
      case 'relative': return this.single(this.position + count, move, signal);
    }
  }

  private async forward(count: number, move: boolean, signal: AbortSignal): Promise<{ rows: Row[]; count: number }> {
    if (this.ended && this.position > this.read) return { rows: [], count: 0 };
    const rows: Row[] = [];
    let passed = 0;
    // a SCROLL cursor moved back reads its kept rows first
    while (passed < count && this.position < this.read) {
      this.position++;
      passed++;
      if (!move) rows.push(this.kept[this.position - 1] as Row);
    }
    while (passed < count && !this.ended) {
      const want = count - passed;
      const batch = await this.pull(move && !this.declaration.scroll ? Math.min(want, MOVE_BATCH) : want, signal);
      passed += batch.length;
      this.position += batch.length;
      if (!move) rows.push(...batch);
    }
    if (passed < count) this.position = this.read + 1;
    return { rows, count: passed };
  }

  private backward(count: number, move: boolean): { rows: Row[]; count: number } {
    this.scrollable();
    const rows: Row[] = [];
    let passed = 0;
    let at = Math.min(this.position, this.read + 1);
    while (passed < count && at > 1) {
      at--;
      passed++;
      if (!move) rows.push(this.kept[at - 1] as Row);
    }
    this.position = passed < count ? 0 : at;
    return { rows, count: passed };
  }

  /** The position `count` (negative) rows from the end: the rest is read first. */
  private async fromEnd(count: number, signal: AbortSignal): Promise<number> {
    this.scrollable();
    while (!this.ended) await this.pull(Infinity, signal);
    return Math.max(0, this.read + 1 + count);
  }

  /** To row `target` (ABSOLUTE, RELATIVE): that row, or none before the first or past the last. */
  private async single(target: number, move: boolean, signal: AbortSignal): Promise<{ rows: Row[]; count: number }> {
    if (target <= 0) {
      if (this.position > 0) this.scrollable();
      this.position = 0;
      return { rows: [], count: 0 };
    }
    if (target <= this.read) {
      this.scrollable();
      this.position = target;
      return { rows: move ? [] : [this.kept[target - 1] as Row], count: 1 };
    }
    // past what was read: on from the last row read (a SCROLL cursor may be behind it)
    if (this.position <= this.read) this.position = this.read;
    await this.forward(target - 1 - this.read, true, signal);
    if (this.position > this.read) return { rows: [], count: 0 };
    const next = await this.forward(1, move, signal);
    return next.count === 1 ? next : { rows: [], count: 0 };
  }

  /** Reads from the source; a SCROLL cursor keeps what it reads, within the result budget. */
  private async pull(count: number, signal: AbortSignal): Promise<Row[]> {
    const rows = await this.source.next(count, signal);
    this.read += rows.length;
    if (rows.length < count) this.ended = true;
    if (this.declaration.scroll) {
      for (const row of rows) {
        this.keptBytes += row.reduce((sum, cell) => sum + (cell === null ? 0 : Buffer.byteLength(cell)), 0);
        this.kept.push(row);
      }
      if (this.keptBytes > this.maxKeptBytes) {
        throw new WireError('54000', `the rows SCROLL cursor "${this.declaration.name}" has read are more than ${this.maxKeptBytes} bytes (server.maxResultBytes)`);
      }
    }
    return rows;
  }

  /** Moving back needs the rows read before: only a SCROLL cursor keeps them. */
  private scrollable(): void {
    if (!this.declaration.scroll) {
      throw new WireError('55000', 'cursor can only scan forward', 'Declare it with SCROLL option to enable backward scan.');
    }
  }
}

/** The cursors of one session, by name. */
export class SessionCursors {
  private readonly cursors = new Map<string, Cursor>();

  constructor(private readonly maxResultBytes: number) {}

  /** Checks a DECLARE before its query is opened: a free name, room for one more. */
  admit(declaration: CursorDeclaration, inTransaction: boolean): void {
    if (!declaration.hold && !inTransaction) throw new WireError('25P01', 'DECLARE CURSOR can only be used in transaction blocks');
    if (this.cursors.has(declaration.name)) throw new WireError('42P03', `cursor "${declaration.name}" already exists`);
    if (this.cursors.size >= MAX_CURSORS) {
      throw new WireError('53400', `a session of the SQL front door holds at most ${MAX_CURSORS} open cursors: close one first`);
    }
  }

  add(declaration: CursorDeclaration, source: CursorSource, inTransaction: boolean): void {
    this.cursors.set(declaration.name, new Cursor(declaration, source, inTransaction, this.maxResultBytes));
  }

  /** A cursor's columns (for Describe), or undefined when there is no such cursor. */
  fields(name: string): FieldDescription[] | undefined {
    return this.cursors.get(name)?.fields;
  }

  /** FETCH or MOVE; a cursor whose read fails is closed, as its datasource transaction is over. */
  async fetch(name: string, direction: FetchDirection, move: boolean, signal: AbortSignal): Promise<Rows & { tag: string; binary: boolean }> {
    const cursor = this.cursors.get(name);
    if (!cursor) throw new WireError('34000', `cursor "${name}" does not exist`);
    try {
      const { rows, count } = await cursor.fetch(direction, move, signal);
      const tag = `${move ? 'MOVE' : 'FETCH'} ${count}`;
      return { fields: move ? [] : cursor.fields, rows, tag, binary: cursor.declaration.binary };
    } catch (error) {
      if (!(error instanceof WireError && error.sqlState === '55000')) await this.close(name);
      throw error;
    }
  }

  names(): ReadonlySet<string> {
    return new Set(this.cursors.keys());
  }

  /** ROLLBACK TO SAVEPOINT: the cursors declared since it close (WITH HOLD too), as PostgreSQL's do. */
  async closeAllBut(kept: ReadonlySet<string>): Promise<void> {
    const closing = [...this.cursors].filter(([key]) => !kept.has(key));
    for (const [key] of closing) this.cursors.delete(key);
    await Promise.all(closing.map(([, cursor]) => cursor.source.close()));
  }

  /** CLOSE name, or every cursor (CLOSE ALL, DISCARD ALL, the end of the connection). */
  async close(name: string | undefined): Promise<void> {
    if (name !== undefined && !this.cursors.has(name)) throw new WireError('34000', `cursor "${name}" does not exist`);
    const closing = [...this.cursors].filter(([key]) => name === undefined || key === name);
    for (const [key] of closing) this.cursors.delete(key);
    await Promise.all(closing.map(([, cursor]) => cursor.source.close()));
  }

  /**
   * The transaction block ended: its cursors end, but those WITH HOLD, which a COMMIT keeps for the session
   * (a ROLLBACK ends those it declared too).
   */
  async endTransaction(committed: boolean): Promise<void> {
    const ending = [...this.cursors].filter(([, cursor]) => !cursor.declaration.hold || (!committed && cursor.inTransaction));
    for (const [key] of ending) this.cursors.delete(key);
    await Promise.all(ending.map(([, cursor]) => cursor.source.close()));
  }
}
