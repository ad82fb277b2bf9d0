/**
 * Runs a federated plan (docs/federation.md#running-a-plan): each pushed statement as the caller on its
 * source, through the runtime seam (role, read-only, time limit, cancellation, metrics), its rows streamed
 * into the engine (DuckDB, in memory, never ATTACHed to a source); then the engine's statement over them.
 * A failure or a cap anywhere aborts the signal every source statement runs under, so each still running is
 * cancelled on its server before the failure is answered.
 */
import { BOOLEAN, DOUBLE, DuckDBInstance, JsonDuckDBValueConverter, LIST, listValue, VARCHAR, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { callerScope } from '../authorization/caller-execution.js';
import type { CallerGrants } from '../authorization/grants.js';
import type { FederationConfig } from '../config/config-types.js';
import type { CatalogColumn, LogicalType } from '../plugin-api/catalog.js';
import { LimitError, ServiceError } from '../plugin-api/errors.js';
import type { Datasource, JsonValue, QueryOptions, QueryResult, ResultColumn } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { DatasourceRuntime, type CallerBounds, type CallerExecutor } from '../sql/datasource-runtime.js';
import { QUERY_CANCELED, StatementFailure } from '../sql/statement-failure.js';
import { failureOutcome } from '../sql/statement-outcome.js';
import { canonicalDecimal, encodeValue } from '../sql/value-encoding.js';
import { engineIdentifier, EXACT_SCALE, postgresDivide, ROW_MARK_COLUMN, unsupported, type ExactParameter } from './engine-sql.js';
import { engineTypeOf, explainFederated, sourceStatement, UNCONSTRAINED_SCALE, type FederatedPlan, type SourceScan } from './federated-plan.js';
import type { Shipping } from './shipping.js';
import { batchBytes, splitLimit, transitBudget, type TransitBudget } from './transit-budget.js';

/** Who runs a plan, and how. */
export interface FederatedRunContext {
  readonly vdb: VirtualDatabase;
  readonly grants: CallerGrants;
  readonly config: FederationConfig;
  /** The runtime the plan's outcome is counted on (the VDB's default datasource). */
  readonly counted: DatasourceRuntime;
}

/** Rows of a cursor's first fetch, before the width of its rows is known. */
const FIRST_FETCH_ROWS = 64;
/** The most rows one fetch asks for, however narrow they are. */
const MAX_FETCH_ROWS = 20_000;
/** A fetch reads about this share of the transit budget: several scans and plans read at once. */
const FETCH_SHARE = 8;

/**
 * One engine per memory limit, shared by the plans of the process: each plan works in a connection of its
 * own, in temporary tables no other connection sees.
 */
const engines = new Map<string, Promise<DuckDBInstance>>();
/** Connections a plan gave back, their session set and its tables dropped, per engine; at most this many kept. */
const idleConnections = new WeakMap<DuckDBInstance, DuckDBConnection[]>();
const IDLE_CONNECTIONS = 4;

function engine(memoryLimit: string): Promise<DuckDBInstance> {
  let instance = engines.get(memoryLimit);
  if (instance === undefined) {
    instance = DuckDBInstance.create(':memory:', {
      // the rest of the limit is for the rows in transit (transit-budget.ts)
      memory_limit: `${splitLimit(memoryLimit).engineBytes}B`,
      // nothing spills to disk: the memory limit is the engine's whole footprint
      temp_directory: '',
      // PostgreSQL's semantics where the engine has a setting for them
      default_null_order: 'nulls_last_on_asc_first_on_desc',
      integer_division: 'true',
      default_collation: '',
      scalar_subquery_error_on_multiple_rows: 'true',
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      enable_external_access: 'false',
    });
    engines.set(memoryLimit, instance);
    instance.catch(() => engines.delete(memoryLimit));
  }
  return instance;
}

/** A connection of the engine: one given back by an earlier plan, or a new one with its session set. */
async function takeConnection(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const kept = idleConnections.get(instance)?.pop();
  if (kept !== undefined) return kept;
  const connection = await instance.connect();
  // the service's sessions run in UTC: a zoned value's text, and a literal compared with one, read alike
  await connection.run("SET TimeZone = 'UTC'");
  return connection;
}

/**
 * Gives a plan's connection back once its tables, if it made them (`tabled`), are dropped (their rows count
 * against the engine's memory limit). A plan that failed or was cancelled closes its connection instead: its
 * state is not known.
 */
async function giveBack(instance: DuckDBInstance, connection: DuckDBConnection, tabled: FederatedPlan | undefined, reusable: boolean): Promise<void> {
  let idle = idleConnections.get(instance);
  if (reusable && (idle?.length ?? 0) < IDLE_CONNECTIONS) {
    try {
      if (tabled !== undefined) await connection.run(tabled.scans.map((scan) => `DROP TABLE ${engineIdentifier(scan.table)}`).join('; '));
      if (idle === undefined) idleConnections.set(instance, (idle = []));
      idle.push(connection);
      return;
    } catch {
      // closed below
    }
  }
  connection.closeSync();
}

/**
 * Runs `plan` as the caller within `bounds`, with the request's bound `values`; `options` bound the answer
 * (rows, bytes) as for one statement.
 */
export async function runFederated(
  plan: FederatedPlan, values: readonly unknown[], context: FederatedRunContext, bounds: CallerBounds, options?: QueryOptions,
): Promise<QueryResult> {
  if (plan.explain) {
    const text = JSON.stringify(explainFederated(plan), null, 2);
    return { columns: [{ name: 'QUERY PLAN', logicalType: 'string' }], rows: [{ 'QUERY PLAN': text }], rowCount: 1, truncated: false };
  }
  const started = Date.now();
  const controller = new AbortController();
  const stop = () => controller.abort(bounds.signal?.reason);
  if (bounds.signal?.aborted) stop();
  bounds.signal?.addEventListener('abort', stop, { once: true });
  let held: { instance: DuckDBInstance; connection: DuckDBConnection } | undefined;
  let input: EngineInput | undefined;
  let answered = false;
  try {
    if (plan.shipping !== undefined) {
      const shipped = await runShipped(plan, plan.shipping, values, context, bounds, controller.signal, options, started);
      if (shipped !== undefined) {
        context.counted.federated('ok');
        answered = true;
        return shipped;
      }
    }
    const instance = await engine(context.config.memoryLimit);
    held = { instance, connection: await takeConnection(instance) };
    const open = held.connection;
    input = new EngineInput(open, plan);
    const rows = input;
    // a dependent scan waits for its driver's keys, wherever the driver stands in the plan
    const keysOf = plan.scans.map(() => deferred<readonly JsonValue[] | undefined>());
    const loads = plan.scans.map(async (scan, index) => {
      try {
        const driverKeys = scan.dependent === undefined ? undefined : await keysOf[scan.dependent.driver]?.promise;
        const keys = driverKeys !== undefined && driverKeys.length <= context.config.semiJoinMaxKeys ? driverKeys : undefined;
        const loaded = await loadScan(rows, scan, index, plan, values, keys, context, bounds, controller.signal);
        keysOf[index]?.resolve(loaded);
        return loaded;
      } catch (error) {
        keysOf[index]?.resolve(undefined);
        throw error;
      }
    });
    const settled = await Promise.allSettled(loads.map((load) => load.catch((error: unknown) => {
      // the first failure cancels every other source statement still running
      controller.abort(error);
      throw error;
    })));
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    if (controller.signal.aborted) throw controller.signal.reason;
    // the engine's statement has what is left of the plan's time limit
    const result = await answer(open, input.statement(values), plan, options, controller.signal, Math.max(1, bounds.timeoutMs - (Date.now() - started)));
    context.counted.federated('ok');
    answered = true;
    return result;
  } catch (error) {
    context.counted.federated(error instanceof ServiceError && error.code === 'federation_unsupported' ? 'denied' : failureOutcome(error, bounds));
    throw engineError(error, context.config.memoryLimit);
  } finally {
    bounds.signal?.removeEventListener('abort', stop);
    if (held !== undefined) await giveBack(held.instance, held.connection, input?.tabled === true ? plan : undefined, answered && !controller.signal.aborted);
  }
}

/**
 * Shipping (shipping.ts): the scans it sends are read, each in one statement of at most
 * `federation.shipMaxRows` rows, all within a fetch's share of the transit budget, held until the receiving
 * source is done (half for the rows, half for their text as bound arrays); then that source answers the
 * statement as the caller. Undefined, nothing answered, where a read is more than that or the source does
 * not compare text byte-wise: the engine answers instead, reading again.
 */
async function runShipped(
  plan: FederatedPlan, shipping: Shipping, values: readonly unknown[], context: FederatedRunContext, bounds: CallerBounds,
  signal: AbortSignal, options: QueryOptions | undefined, started: number,
): Promise<QueryResult | undefined> {
  const { runtime: receiving, executor: receiver } = callerOn(shipping.datasource, context, { ...bounds, signal });
  const budget = transitBudget(context.config.memoryLimit);
  // a fetch's share, as a small read of the engine's takes: as many plans ship at once as read so
  const reserved = await budget.reserve(budget.capacity / FETCH_SHARE, signal);
  try {
    const rowBytes = Math.floor(reserved / 2 / shipping.shipped.length);
    // as many as the engine's plan would bind as keys, where it binds them
    const limit = Math.min(context.config.shipMaxRows, context.config.maxSourceRows, shipping.keyed ? context.config.semiJoinMaxKeys : Infinity);
    const [byteWise, ...reads] = await Promise.all([
      comparesByteWise(shipping, plan, receiver),
      ...shipping.shipped.map(async (index) => {
        const scan = plan.scans[index] as SourceScan;
        const { runtime, executor } = callerOn(scan.datasource, context, { ...bounds, signal });
        const { sql, bindings } = sourceStatement(scan, values);
        const result = await executor.query(sql, bindings, { maxRows: limit, maxBytes: rowBytes, signal });
        runtime.rowsRead(result.rows.length);
        return { index, result };
      }),
    ]);
    if (!byteWise || reads.some(({ result }) => result.truncated)) return undefined;
    const rows = new Map(reads.map(({ index, result }) => [index, result.rows]));
    const bound = shipping.bindings.map((binding) => ('value' in binding
      ? values[binding.value]
      // a scan whose columns are not read sends one mark per row
      : (rows.get(binding.scan) ?? []).map((row) => (binding.column === ROW_MARK_COLUMN ? 1 : row[binding.column] ?? null))));
    const timeoutMs = Math.max(1, bounds.timeoutMs - (Date.now() - started));
    const { executor: answer } = callerOn(shipping.datasource, context, { ...bounds, timeoutMs, signal });
    try {
      // a plan made for more rows than the server assumes of an array it does not see (unnest: 100) is not kept for fewer, nor the reverse
      const planEachRun = reads.reduce((sum, { result }) => sum + result.rows.length, 0) > UNNEST_ROWS;
      // its rows are what the service reads of that source: within federation.maxSourceRows, counted as a pushed statement's
      const cap = context.config.maxSourceRows;
      const maxRows = options?.maxRows !== undefined && options.maxRows <= cap ? options.maxRows : cap + 1;
      const result = await answer.query(shipping.sql, bound, { maxRows, maxBytes: options?.maxBytes, signal, planEachRun });
      receiving.rowsRead(result.rows.length);
      if (result.rows.length > cap) throw overSourceRows(shipping.datasource.name, cap);
      receiving.shipped();
      return result;
    } catch (error) {
      // a statement the source cannot compile as sent (syntax, a name, a type): the engine answers, or refuses, as it would have
      if (error instanceof StatementFailure && /^42/.test(error.code ?? '') && error.code !== '42501') return undefined;
      throw error;
    }
  } finally {
    budget.release(reserved);
  }
}

/** The rows PostgreSQL's planner assumes of `unnest` of an array it does not see (a generic plan's). */
const UNNEST_ROWS = 100;

/**
 * Whether the receiving source compares text as collation "C" does wherever the statement's relations
 * there compare it (its database's default, and their columns' own): else shipping would answer in its
 * collation. Asked once per plan.
 */
const byteWiseAnswers = new WeakMap<Shipping, Promise<boolean>>();

function comparesByteWise(shipping: Shipping, plan: FederatedPlan, receiver: Pick<CallerExecutor, 'query'>): Promise<boolean> {
  let known = byteWiseAnswers.get(shipping);
  if (known === undefined) {
    const { dialect } = shipping.datasource;
    const relations = plan.scans.filter((scan) => scan.datasource === shipping.datasource).map((scan) => `${dialect.quoteIdentifier(scan.relation.schema)}.${dialect.quoteIdentifier(scan.relation.name)}`);
    known = receiver.query(BYTE_WISE_SQL, [relations]).then(
      (result) => result.rows[0]?.byte_wise === true && (!shipping.classifies || result.rows[0]?.ascii === true),
      () => false,
    );
    byteWiseAnswers.set(shipping, known);
  }
  return known;
}

/**
 * `byte_wise`: the database orders text by its bytes (`C.UTF-8` orders by code point, which is UTF-8's byte
 * order) and no column of the relations has a collation of its own (100 is a column's default, 950 "C",
 * 951 "POSIX"); `ascii`: it also classifies characters as "C" does (`C.UTF-8` upper-cases `é`, "C" does not).
 */
const BYTE_WISE_SQL = `SELECT coalesce((SELECT d.datcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8') AND coalesce(pg_catalog.to_jsonb(d) ->> 'datlocprovider', 'c') = 'c'
  FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()), false)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = ANY(?::pg_catalog.regclass[]) AND a.attnum > 0 AND NOT a.attisdropped AND a.attcollation NOT IN (0, 100, 950, 951)) AS byte_wise,
  coalesce((SELECT d.datctype IN ('C', 'POSIX') FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()), false) AS ascii`;

/** The engine's table of a scan's rows. */
function tableDefinition(scan: SourceScan): string {
  const definitions = scan.columns.length === 0
    ? `${engineIdentifier(ROW_MARK_COLUMN)} INTEGER`
    : scan.columns.map((column) => `${engineIdentifier(column.name)} ${engineTypeOf(column, scan.relation).sql}`).join(', ');
  return `CREATE TEMP TABLE ${engineIdentifier(scan.table)} (${definitions})`;
}

/** The runtime of `datasource` and the caller's read-only executor on it, within `bounds`. */
function callerOn(datasource: Datasource, context: FederatedRunContext, bounds: CallerBounds): { runtime: DatasourceRuntime; executor: CallerExecutor } {
  const runtime = DatasourceRuntime.over(datasource);
  return { runtime, executor: runtime.forCaller(callerScope(runtime.dialect, context.vdb, context.grants, true), bounds) };
}

/** A promise and its resolve, for a value another task makes. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * Reads one relation from its source into the engine's table. Returns the distinct keys of the columns a
 * dependent scan waits for (undefined when none does, or when they are more than `semiJoinMaxKeys`).
 */
async function loadScan(
  input: EngineInput, scan: SourceScan, index: number, plan: FederatedPlan, values: readonly unknown[], keys: readonly JsonValue[] | undefined,
  context: FederatedRunContext, bounds: CallerBounds, signal: AbortSignal,
): Promise<readonly JsonValue[] | undefined> {
  const { runtime, executor } = callerOn(scan.datasource, context, { ...bounds, signal });
  const dependents = plan.scans.filter((other) => other.dependent?.driver === index).map((other) => other.dependent?.driverColumn as string);
  const keySets = new Map(dependents.map((column) => [column, new Set<JsonValue>()]));
  const { sql, bindings } = sourceStatement(scan, values, keys);
  const limit = context.config.maxSourceRows;
  let read = 0;
  const append = async (rows: readonly Record<string, JsonValue>[]) => {
    read += rows.length;
    if (read > limit) throw overSourceRows(scan.relation.datasource, limit);
    for (const [column, set] of keySets) {
      for (const row of rows) {
        const key = row[column];
        if (key !== null && key !== undefined && set.size <= context.config.semiJoinMaxKeys) set.add(key);
      }
    }
    await input.add(index, rows);
  };
  // a unique key's equality, or a dependent join on a driver's few keys: a few rows, read without a cursor's round trips
  const small = scan.small === true || keys !== undefined;
  const source = { executor, datasource: scan.relation.datasource, memoryLimit: context.config.memoryLimit };
  try {
    await readSource(source, sql, bindings, limit, small, signal, append);
  } finally {
    runtime.rowsRead(read);
  }
  if (keySets.size === 0) return undefined;
  const [set] = keySets.values();
  return set === undefined || set.size > context.config.semiJoinMaxKeys ? undefined : [...set];
}

/** Where a pushed statement reads, and the limit its rows in transit count against. */
interface ScanSource {
  readonly executor: Pick<CallerExecutor, 'query' | 'openCursor'>;
  readonly datasource: string;
  readonly memoryLimit: string;
}

/**
 * Streams a pushed statement's rows to `append` within the transit budget: by cursor where the source has
 * one, planned for all its rows, each fetch sized to a share of the budget by the widest rows seen so far and
 * read only once that much is reserved (so a source waits while the engine is behind); else in one read,
 * which may hold the whole budget and no more. A `small` statement is read in one read within a fetch's
 * share, and by cursor when it is more than that. A batch over the budget answers 422 rather than growing
 * the process.
 */
async function readSource(
  source: ScanSource, sql: string, bindings: readonly unknown[], limit: number, small: boolean, signal: AbortSignal,
  append: (rows: readonly Record<string, JsonValue>[]) => Promise<void>,
): Promise<void> {
  const { executor } = source;
  const budget = transitBudget(source.memoryLimit);
  const share = budget.capacity / FETCH_SHARE;
  if (executor.openCursor === undefined || small) {
    const reserved = await budget.reserve(executor.openCursor === undefined ? budget.capacity : share, signal);
    try {
      // one more than the cap, so that a statement over it is told apart from one exactly at it
      const result = await executor.query(sql, bindings, { maxRows: limit + 1, maxBytes: reserved, signal });
      if (result.truncatedBy !== 'maxBytes') return await append(result.rows);
      if (executor.openCursor === undefined) throw overTransit(source, budget);
    } finally {
      budget.release(reserved);
    }
  }
  const cursor = await executor.openCursor(sql, bindings, signal, true);
  let rowBytes: number | undefined;
  try {
    for (;;) {
      const count = rowBytes === undefined ? FIRST_FETCH_ROWS : Math.max(1, Math.min(MAX_FETCH_ROWS, Math.floor(share / rowBytes)));
      const reserved = await budget.reserve(rowBytes === undefined ? share : count * rowBytes, signal);
      try {
        const batch = await cursor.fetch(count, { signal, maxBytes: budget.capacity });
        if (batch.truncatedBy === 'maxBytes') throw overTransit(source, budget);
        if (batch.rows.length > 0) {
          rowBytes = Math.max(rowBytes ?? 0, batchBytes(batch.rows) / batch.rows.length);
          await append(batch.rows);
        }
        if (batch.rows.length < count) return;
      } finally {
        budget.release(reserved);
      }
    }
  } finally {
    await cursor.close();
  }
}

function overSourceRows(datasource: string, limit: number): LimitError {
  return new LimitError('result_too_large', `datasource ${datasource}: a pushed statement reads more than ${limit} rows (federation.maxSourceRows)`, {
    details: { datasource, limitRows: limit },
  });
}

function overTransit(source: ScanSource, budget: TransitBudget): LimitError {
  return new LimitError('result_too_large',
    `datasource ${source.datasource}: the rows of a pushed statement read at once exceed ${budget.capacity} bytes, the share of federation.memoryLimit (${source.memoryLimit}) for rows on their way to the engine`,
    { details: { datasource: source.datasource, memoryLimit: source.memoryLimit } });
}

/**
 * The scans load concurrently into one connection, which runs one thing at a time: a call on it while
 * another scan's appender flushes fails that flush ("closed pending query result"). Each use waits its turn.
 */
const turns = new WeakMap<DuckDBConnection, Promise<unknown>>();

function inTurn<T>(connection: DuckDBConnection, work: () => Promise<T>): Promise<T> {
  const next = (turns.get(connection) ?? Promise.resolve()).then(work);
  turns.set(connection, next.catch(() => undefined));
  return next;
}

async function appendRows(connection: DuckDBConnection, scan: SourceScan, rows: readonly Record<string, JsonValue>[]): Promise<void> {
  if (rows.length === 0) return;
  const appender = await connection.createAppender(scan.table);
  try {
    for (const row of rows) {
      if (scan.columns.length === 0) {
        appender.appendInteger(1);
      } else {
        for (const column of scan.columns) {
          const value = loadedValue(row[column.name], column, scan);
          if (value === null) appender.appendNull();
          else if (typeof value === 'boolean') appender.appendBoolean(value);
          else if (typeof value === 'number') appender.appendDouble(value);
          else appender.appendVarchar(value);
        }
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** A source's value as the engine takes it in: NULL, a boolean, a number, or text it casts to the column's type. */
function loadedValue(value: JsonValue | undefined, column: CatalogColumn, scan: SourceScan): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean' || typeof value === 'number') return value;
  if (typeof value === 'string') return checkedDecimal(value, column.logicalType, column.nativeType, scan);
  throw unsupported(`a ${column.logicalType} value of ${scan.relation.schema}.${scan.relation.name}.${column.name}`);
}

/** Up to this many rows over all its scans, a plan's rows reach the engine as bound lists in its statement, not tables. */
const LISTED_ROWS = 1024;

/**
 * Where a plan's rows go: held, while they are few, and bound into the engine's statement as one list per
 * column (`WITH "r1" AS (SELECT CAST(unnest($n) AS INTEGER) AS "id", …)`: one engine call where tables take
 * five); past `LISTED_ROWS`, or a column whose values are of two kinds, into temporary tables, one per scan,
 * through the appender, as they come. Both cast the same text and numbers to the same column types.
 */
class EngineInput {
  private readonly held = new Map<number, Record<string, JsonValue>[]>();
  /** The kind of the non-NULL values of each held column (`scan:column`): one list holds one kind. */
  private readonly kinds = new Map<string, string>();
  private count = 0;
  private tables: Promise<void> | undefined;

  constructor(private readonly connection: DuckDBConnection, private readonly plan: FederatedPlan) {}

  /** Whether the rows went to tables. */
  get tabled(): boolean {
    return this.tables !== undefined;
  }

  async add(index: number, rows: readonly Record<string, JsonValue>[]): Promise<void> {
    const scan = this.plan.scans[index] as SourceScan;
    if (this.tables === undefined && this.count + rows.length <= LISTED_ROWS && this.oneKindEach(index, scan, rows)) {
      this.held.set(index, [...(this.held.get(index) ?? []), ...rows]);
      this.count += rows.length;
      return;
    }
    await this.tabling();
    await inTurn(this.connection, () => appendRows(this.connection, scan, rows));
  }

  /**
   * Whether each column's values, with those held, are of one kind (or NULL); checks each value as the
   * appender's load would (`loadedValue`, which keeps a valid one as it is) and learns their kinds.
   */
  private oneKindEach(index: number, scan: SourceScan, rows: readonly Record<string, JsonValue>[]): boolean {
    for (const column of scan.columns) {
      const key = `${index}:${column.name}`;
      for (const row of rows) {
        const value = loadedValue(row[column.name], column, scan);
        if (value === null) continue;
        const known = this.kinds.get(key);
        if (known === undefined) this.kinds.set(key, typeof value);
        else if (known !== typeof value) return false;
      }
    }
    return true;
  }

  /** The engine's statement and its bound values: the plan's, or with the held rows as lists. */
  statement(values: readonly unknown[]): { sql: string; values: (DuckDBValue | null)[]; types: (DuckDBType | undefined)[] } {
    const own = this.plan.parameters.map((index, position) => {
      const exact = this.plan.exactParameters.find((parameter) => parameter.number === position + 1);
      return exact === undefined ? engineValue(values[index]) : exactText(values[index], exact.type);
    });
    if (this.tables !== undefined) return { sql: this.plan.engineSql, values: own, types: own.map(() => undefined) };
    const lists: DuckDBValue[] = [];
    const types: (DuckDBType | undefined)[] = own.map(() => undefined);
    const ctes = this.plan.scans.map((scan, index) => {
      const rows = this.held.get(index) ?? [];
      const columns = scan.columns.length === 0
        ? [{ name: ROW_MARK_COLUMN, sql: 'INTEGER', values: rows.map(() => 1) }]
        : scan.columns.map((column) => ({ name: column.name, sql: engineTypeOf(column, scan.relation).sql, values: rows.map((row) => row[column.name] ?? null) }));
      const items = columns.map((column) => {
        const kind = scan.columns.length === 0 ? 'number' : this.kinds.get(`${index}:${column.name}`);
        lists.push(listValue(column.values as DuckDBValue[]));
        types.push(LIST(kind === 'number' ? DOUBLE : kind === 'boolean' ? BOOLEAN : VARCHAR));
        return `CAST(unnest($${own.length + lists.length}) AS ${column.sql}) AS ${engineIdentifier(column.name)}`;
      });
      return `${engineIdentifier(scan.table)} AS (SELECT ${items.join(', ')})`;
    });
    const recursive = /^WITH\s+RECURSIVE\s/i.exec(this.plan.engineSql);
    const withClause = /^WITH\s/i.exec(this.plan.engineSql);
    const sql = recursive !== null
      ? `WITH RECURSIVE ${ctes.join(', ')}, ${this.plan.engineSql.slice(recursive[0].length)}`
      : withClause !== null ? `WITH ${ctes.join(', ')}, ${this.plan.engineSql.slice(withClause[0].length)}` : `WITH ${ctes.join(', ')} ${this.plan.engineSql}`;
    return { sql, values: [...own, ...lists], types };
  }

  /** From now on into tables: made once, with the rows held so far. */
  private tabling(): Promise<void> {
    this.tables ??= inTurn(this.connection, async () => {
      await this.connection.run(this.plan.scans.map(tableDefinition).join('; '));
      for (const [index, rows] of this.held) await appendRows(this.connection, this.plan.scans[index] as SourceScan, rows);
      this.held.clear();
    });
    return this.tables;
  }
}

/** A value of an unconstrained numeric column, refused where the engine would round it. */
function checkedDecimal(value: string, logicalType: LogicalType, nativeType: string, scan: SourceScan): string {
  if (logicalType !== 'decimal' || /\(/.test(nativeType)) return value;
  const [whole = '', fraction = ''] = value.replace(/^-/, '').split('.');
  if (fraction.length > UNCONSTRAINED_SCALE || whole.length > 38 - UNCONSTRAINED_SCALE) {
    throw unsupported(`a numeric value of ${scan.relation.schema}.${scan.relation.name} with more than ${UNCONSTRAINED_SCALE} fractional or ${38 - UNCONSTRAINED_SCALE} integer digits`);
  }
  return value;
}

/** The engine's answer, cut at the route's row and byte bounds as a single statement's would be. */
async function answer(
  connection: DuckDBConnection, statement: ReturnType<EngineInput['statement']>, plan: FederatedPlan, options: QueryOptions | undefined, signal: AbortSignal, timeoutMs: number,
): Promise<QueryResult> {
  const interrupt = () => connection.interrupt();
  signal.addEventListener('abort', interrupt, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, timeoutMs);
  try {
    // an undefined type is inferred from its value (the request's own); the array is what bind reads by position
    const result = await connection.stream(statement.sql, statement.values as DuckDBValue[], statement.types as DuckDBType[]);
    const names = result.columnNames();
    const quotients = new Set(plan.quotients);
    const codecs = result.columnTypes().map((type, position) => (quotients.has(position) ? { logicalType: 'decimal' as const } : logicalOf(String(type))));
    const columns: ResultColumn[] = names.map((name, position) => ({ name, logicalType: (codecs[position] as Codec).logicalType }));
    const withTimeZone = names.filter((_, position) => (codecs[position] as Codec).withTimeZone === true);
    const rows: Record<string, JsonValue>[] = [];
    let bytes = 2;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) break;
      for (const values of chunk.convertRows(JsonDuckDBValueConverter)) {
        const row: Record<string, JsonValue> = {};
        names.forEach((name, position) => {
          const value = quotients.has(position) ? quotientOf(values[position] ?? null) : values[position] ?? null;
          row[name] = encodeValue(value, codecs[position] as Codec);
        });
        if (options?.maxRows !== undefined && rows.length >= options.maxRows) return cut(columns, rows, withTimeZone, 'maxRows');
        bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
        if (options?.maxBytes !== undefined && bytes > options.maxBytes) return cut(columns, rows, withTimeZone, 'maxBytes');
        rows.push(row);
      }
    }
    return { columns, rows, rowCount: rows.length, truncated: false, ...(withTimeZone.length > 0 && { withTimeZone }) };
  } catch (error) {
    if (signal.aborted) throw signal.reason ?? error;
    if (timedOut) {
      const cancelled = new Error('canceling statement due to statement timeout');
      throw new StatementFailure('timeout', cancelled, QUERY_CANCELED, undefined, undefined, error);
    }
    throw error;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', interrupt);
  }
}

/** A numeric division's value: the engine's exact `{a, b}` divided as PostgreSQL divides. */
function quotientOf(value: unknown): string | null {
  const { a, b } = (value ?? {}) as { a?: unknown; b?: unknown };
  return postgresDivide(a === null || a === undefined ? null : String(a), b === null || b === undefined ? null : String(b));
}

function cut(columns: ResultColumn[], rows: Record<string, JsonValue>[], withTimeZone: string[], by: 'maxRows' | 'maxBytes'): QueryResult {
  return { columns, rows, rowCount: rows.length, truncated: true, truncatedBy: by, ...(withTimeZone.length > 0 && { withTimeZone }) };
}

/**
 * A bound value read beside a number, as PostgreSQL reads it: its text (a number's shortest, as the drivers
 * send it), which the engine casts to that type; text that is not one (`6.5` for an integer) raises
 * PostgreSQL's 22P02; a numeric with more digits than `DECIMAL(38, EXACT_SCALE)` holds is refused.
 */
function exactText(value: unknown, type: ExactParameter['type']): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' && typeof value !== 'string') throw unsupported(`a bound value of type ${typeof value} beside a number`);
  const invalid = () => {
    const error = new Error(`invalid input syntax for type ${type}: "${String(value)}"`);
    return new StatementFailure('invalid_value', error, '22P02', undefined, undefined, error);
  };
  if (type !== 'numeric') {
    const integer = /^[+-]?\d+$/.exec(String(value).trim());
    if (integer === null) throw invalid();
    return integer[0].replace(/^\+/, '');
  }
  const text = canonicalDecimal(String(value).trim());
  const match = /^-?(\d+)(?:\.(\d+))?$/.exec(text);
  if (match === null) throw invalid();
  if ((match[1] ?? '').length > 38 - EXACT_SCALE || (match[2] ?? '').length > EXACT_SCALE) {
    throw unsupported(`a bound value beside a numeric with more than ${38 - EXACT_SCALE} integer or ${EXACT_SCALE} fractional digits`);
  }
  return text;
}

/** A bound value as the engine takes it: numbers, text, booleans and NULL; anything else is refused. */
function engineValue(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  throw unsupported(`a bound value of type ${typeof value}`);
}

interface Codec {
  logicalType: LogicalType;
  withTimeZone?: boolean;
}

/** The logical type of an engine column, which the plan made what PostgreSQL would answer. */
function logicalOf(type: string): Codec {
  if (/^DECIMAL/.test(type) || type === 'HUGEINT') return { logicalType: 'decimal' };
  switch (type) {
    case 'INTEGER': case 'SMALLINT': case 'TINYINT': return { logicalType: 'integer' };
    case 'BIGINT': return { logicalType: 'bigint' };
    case 'DOUBLE': case 'FLOAT': return { logicalType: 'float' };
    case 'VARCHAR': case 'NULL': case '"NULL"': return { logicalType: 'string' };
    case 'BOOLEAN': return { logicalType: 'boolean' };
    case 'DATE': return { logicalType: 'date' };
    case 'TIME': return { logicalType: 'time' };
    case 'TIMESTAMP': return { logicalType: 'timestamp' };
    case 'TIMESTAMP WITH TIME ZONE': return { logicalType: 'timestamp', withTimeZone: true };
    case 'UUID': return { logicalType: 'uuid' };
    default: throw unsupported(`a result column of engine type ${type}`);
  }
}

/**
 * The engine's own failures as the service's: over its memory a 422; any other (a division by zero the
 * statement raised, a type the engine refused) a failed statement, as a database's would be.
 */
function engineError(error: unknown, memoryLimit: string): unknown {
  if (error instanceof ServiceError || error instanceof StatementFailure || !(error instanceof Error)) return error;
  if (/Out of Memory|could not allocate/i.test(error.message)) {
    return new LimitError('result_too_large', `the statement over several datasources needs more memory than ${memoryLimit} (federation.memoryLimit)`, {
      details: { memoryLimit }, cause: error,
    });
  }
  const code = ENGINE_ERRORS.find(([pattern]) => pattern.test(error.message))?.[1] ?? 'XX000';
  return new StatementFailure(code === 'XX000' ? 'other' : 'invalid_value', error, code, undefined, undefined, error);
}

/** The engine's errors that PostgreSQL raises for the same statement and data, with PostgreSQL's SQLSTATE. */
const ENGINE_ERRORS: readonly (readonly [RegExp, string])[] = [
  // raised by the engine's statement itself, for PostgreSQL's (engine-sql.ts)
  [/division by zero/, '22012'],
  [/negative substring length/, '22011'],
  [/invalid input syntax for type/, '22P02'],
  // DuckDB's own: an integer past its type, a cast that cannot read its text, a scalar subquery of several rows
  [/^Out of Range Error: Overflow/, '22003'],
  [/^Conversion Error: Could not convert/, '22P02'],
  [/More than one row returned by a subquery/, '21000'],
];
