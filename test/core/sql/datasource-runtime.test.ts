import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { setFlagsFromString } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Catalog } from '../../../core/plugin-api/catalog.js';
import { UnavailableError } from '../../../core/plugin-api/errors.js';
import type { BuiltStatement, Datasource, QueryOptions, QueryResult, SqlDialect, SqlExecutor, TransactionOptions } from '../../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { isConnectionFailure, StatementFailure, unavailableError } from '../../../core/sql/statement-failure.js';

const EMPTY: QueryResult = { columns: [], rows: [], rowCount: 0, truncated: false };

/** A datasource that records how its calls overlap and fails on demand. */
class FakeDatasource implements Datasource {
  readonly name = 'fake_db';
  running = 0;
  maxRunning = 0;
  closes = 0;
  failWith: unknown;
  /** The options of each query and transaction, as the adapter received them. */
  readonly received: (QueryOptions | TransactionOptions | undefined)[] = [];

  constructor(readonly dialect: SqlDialect) {}

  /** Fails with `failWith` when the SQL is `fail`. */
  async query(sql: string, _bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult> {
    this.received.push(options);
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.running -= 1;
    if (sql === 'fail') throw this.failWith;
    return EMPTY;
  }

  async introspect(): Promise<Catalog> {
    return { schemas: [], relations: [], functions: [] };
  }

  buildStatement(): BuiltStatement {
    return { sql: 'select 1', bindings: [] };
  }

  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
    this.received.push(options);
    return work(this);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.closes += 1;
  }
}

const dialect = (): SqlDialect => new PostgresDialect('fake');

const errorWithCode = (message: string, code: string) => Object.assign(new Error(message), { code });

test('the runtime leaves the order of calls to the datasource: they run together', async () => {
  const inner = new FakeDatasource(dialect());
  const runtime = runtimeOver(inner);
  await Promise.all([1, 2, 3].map(() => runtime.query('select 1', [])));
  assert.is(inner.maxRunning, 3);
});

test('close runs once; calls after it are refused as unavailable; wrapping twice returns the same runtime', async () => {
  const inner = new FakeDatasource(dialect());
  const runtime = runtimeOver(inner);
  assert.is(runtimeOver(runtime), runtime);
  await Promise.all([runtime.close(), runtime.close()]);
  await runtime.close();
  assert.is(inner.closes, 1);
  const error = await runtime.ping().then(() => undefined, (e: unknown) => e);
  assert.instance(error, UnavailableError);
  assert.is((error as UnavailableError).code, 'datasource_unavailable');
  assert.match((error as Error).message, 'fake_db');
});

test('connection failures become datasource_unavailable with a short reason, other driver errors a classified StatementFailure', async () => {
  const inner = new FakeDatasource(dialect());
  const runtime = runtimeOver(inner);
  inner.failWith = errorWithCode('connect ECONNREFUSED 10.0.0.1:5432 user=admin password=hunter2', 'ECONNREFUSED');
  const error = await runtime.query('fail', []).then(() => undefined, (e: unknown) => e);
  assert.instance(error, UnavailableError);
  assert.is((error as Error).message, 'datasource "fake_db" is unavailable: connection refused (ECONNREFUSED)');
  assert.is((error as Error).cause, inner.failWith);

  const syntax = errorWithCode('syntax error at or near "selec"', '42601');
  inner.failWith = syntax;
  const failure = await runtime.query('fail', []).then(() => undefined, (e: unknown) => e);
  assert.instance(failure, StatementFailure);
  assert.equal([(failure as StatementFailure).kind, (failure as StatementFailure).code, (failure as Error).cause], ['other', '42601', syntax]);
});

test('the options an adapter receives with a deadline keep one hidden class from statement to statement', async () => {
  const inner = new FakeDatasource(dialect());
  const executor = runtimeOver(inner).forCaller(undefined, { timeoutMs: 1_000 });
  for (let run = 0; run < 20; run++) await executor.query('select 1', [], { maxBytes: 1_000 });
  const queries = inner.received.splice(0);
  for (let run = 0; run < 20; run++) await executor.transaction(async () => undefined);
  const transactions = inner.received.splice(0);
  // V8's own view of the objects: Node 20 gave `{ ...options, deadline }` a new map each time, so every read of
  // the options in the adapter missed its inline caches (bench/README.md, "Issue 28: the peers regression")
  setFlagsFromString('--allow-natives-syntax');
  const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;
  for (const [kind, received] of [['query', queries], ['transaction', transactions]] as const) {
    assert.is(received.length, 20);
    assert.ok(received.every((options) => options?.deadline !== undefined), `${kind}: each has its deadline`);
    const other = received.findIndex((options) => !sameMap(options, received[0]));
    assert.is(other, -1, `${kind} ${other}'s options have a hidden class of their own`);
  }
});

test('what counts as a connection failure, across drivers', () => {
  const knexTimeout = Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' });
  const failures = [
    errorWithCode('x', 'ECONNRESET'), errorWithCode('x', '57P01'), errorWithCode('x', '08006'), errorWithCode('x', '28P01'),
    errorWithCode('x', 'PROTOCOL_CONNECTION_LOST'), errorWithCode('x', 'ESOCKET'), errorWithCode('x', 'NJS-503'),
    errorWithCode('x', 'ORA-12541'), knexTimeout, new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'), new Error('Can\'t add new command when connection is in closed state'),
    new AggregateError([errorWithCode('x', 'ECONNREFUSED')], 'x'), new Error('wrapped', { cause: errorWithCode('x', 'ENOTFOUND') }),
  ];
  for (const error of failures) assert.ok(isConnectionFailure(error), error.message + String((error as { code?: string }).code));
  for (const error of [errorWithCode('x', '23505'), errorWithCode('x', 'ER_DUP_ENTRY'), new Error('x'), 'text']) {
    assert.not.ok(isConnectionFailure(error));
  }
  assert.is(unavailableError('erp', errorWithCode('x', '28P01')).message, 'datasource "erp" is unavailable: authentication failed (28P01)');
  assert.is(unavailableError('erp', new Error('odd')).message, 'datasource "erp" is unavailable: could not connect');
  assert.is(unavailableError('erp', errorWithCode('database "x" does not exist', '3D000')).message,
    'datasource "erp" is unavailable: could not connect (3D000)');
});

test.run();
