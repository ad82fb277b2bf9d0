import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource, QueryOptions, QueryResult, SqlExecutor } from '../../../core/plugin-api/sql-dialect.js';
import { runtimeOver, observeStatements } from '../../../core/sql/datasource-runtime.js';
import { failureOutcome, type StatementObserver, type StatementOutcome } from '../../../core/sql/statement-outcome.js';
import { sharedPglite } from '../../support/shared-pglite.js';

/** A statement the database ends with `query_canceled`, as a dialect reports a statement over its time limit. */
function queryCanceled(): Error {
  return Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
}

const outcomes = suite('failureOutcome: how a failed statement ended');

outcomes('57014 over the statement\'s own time limit is a timeout', () => {
  assert.is(failureOutcome(queryCanceled(), { timeoutMs: 50 }), 'timeout');
  assert.is(failureOutcome(new Error('wrapped', { cause: queryCanceled() }), { timeoutMs: 50 }), 'timeout');
});

outcomes('an aborted signal is a cancellation, whatever the driver said; 57014 unasked too', () => {
  const controller = new AbortController();
  controller.abort();
  assert.is(failureOutcome(new Error('aborted'), { signal: controller.signal }), 'cancelled');
  assert.is(failureOutcome(queryCanceled(), { signal: controller.signal, timeoutMs: 50 }), 'cancelled');
  assert.is(failureOutcome(queryCanceled(), undefined), 'cancelled');
});

outcomes('anything else failed', () => {
  assert.is(failureOutcome(Object.assign(new Error('syntax'), { code: '42601' }), { timeoutMs: 50 }), 'failed');
  assert.is(failureOutcome('not an error', undefined), 'failed');
});

outcomes.run();

/** Records what it is told. */
class Recorder implements StatementObserver {
  readonly openedNames: string[] = [];
  /** Datasource, outcome, and whether a duration was given. */
  readonly statements: [string, StatementOutcome, boolean][] = [];

  opened(name: string): void {
    this.openedNames.push(name);
  }

  statement(datasource: string, outcome: StatementOutcome, seconds?: number): void {
    this.statements.push([datasource, outcome, seconds !== undefined]);
  }

  sourceRows(): void {}

  federatedPlan(): void {}

  shippedPlan(): void {}
}

const observed = suite<{ recorder: Recorder; datasource: Datasource }>('observeStatements: every statement of a service, with its outcome');

observed.before.each(async (context) => {
  context.recorder = new Recorder();
  context.datasource = observeStatements('retail_db', await sharedPglite(), context.recorder);
});

observed('statements on the pool and in a transaction are reported under the config name', async ({ recorder, datasource }) => {
  assert.equal(recorder.openedNames, ['retail_db']);
  await datasource.query('select 1 as one', []);
  await datasource.transaction(async (transaction: SqlExecutor) => {
    await transaction.query('select 2 as two', []);
  });
  await datasource.query('select * from no_such_table', []).catch(() => undefined);
  assert.equal(recorder.statements, [['retail_db', 'ok', true], ['retail_db', 'ok', true], ['retail_db', 'failed', true]]);
});

observed('a denial is reported without a duration; an unobserved datasource ignores it', async ({ recorder, datasource }) => {
  runtimeOver(datasource).denied();
  runtimeOver(await sharedPglite()).denied();
  assert.equal(recorder.statements, [['retail_db', 'denied', false]]);
});

observed('a statement over its time limit or cancelled by its signal is reported so', async ({ recorder }) => {
  const failing: Datasource = Object.create(await sharedPglite(), {
    query: { value: async (_sql: string, _bindings: unknown[], _options?: QueryOptions): Promise<QueryResult> => { throw queryCanceled(); } },
  }) as Datasource;
  const datasource = observeStatements('slow_db', failing, recorder);
  const controller = new AbortController();
  controller.abort();
  await datasource.query('select pg_sleep(1)', [], { timeoutMs: 10 }).catch(() => undefined);
  await datasource.query('select pg_sleep(1)', [], { signal: controller.signal }).catch(() => undefined);
  assert.equal(recorder.statements.map(([name, outcome]) => `${name}:${outcome}`), ['slow_db:timeout', 'slow_db:cancelled']);
});

observed('the datasource keeps its own name and dialect', async ({ datasource }) => {
  const shared = await sharedPglite();
  assert.is(datasource.name, shared.name);
  assert.is(datasource.dialect, shared.dialect);
});

observed.run();
