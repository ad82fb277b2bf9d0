import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InternalError, ServiceError } from '../../../core/plugin-api/errors.js';
import { statementWireError } from '../../../core/sql-door/wire-errors.js';
import { readFailure, type CallerRead } from '../../../core/sql/read-failure.js';
import { failureOutcome } from '../../../core/sql/statement-outcome.js';

const read: CallerRead = { subject: 'query q', datasource: 'db', timeoutMs: 1000, maxResultBytes: 100 };
const driverError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);
/** How knex and the adapters hand a driver's error on: as it is, or as the cause of one, or two, of theirs. */
const wrappings = (error: Error): Error[] => [error, new Error('wrapped', { cause: error }), new Error('twice', { cause: new Error('once', { cause: error }) })];

/** What each door answers for one failure: the HTTP route's code, the SQL door's SQLSTATE, the metric's outcome. */
function answers(error: unknown): [string, string, string] {
  const http = readFailure(error, read, () => new InternalError('query_failed', 'failed'));
  return [(http as ServiceError).code, statementWireError(error, false).sqlState, failureOutcome(error, { timeoutMs: 1000 })];
}

const cases: [string, Error, [string, string, string]][] = [
  ['a privilege the role lacks (PostgreSQL)', driverError('permission denied for table orders', { code: '42501' }), ['forbidden', '42501', 'denied']],
  ['a write in a read-only transaction', driverError('cannot execute INSERT in a read-only transaction', { code: '25006' }), ['forbidden', '25006', 'denied']],
  ['a privilege the user lacks (MySQL)', driverError('SELECT command denied', { code: 'ER_TABLEACCESS_DENIED_ERROR', errno: 1142 }), ['forbidden', '42501', 'denied']],
  ['the statement time limit', driverError('canceling statement due to statement timeout', { code: '57014' }), ['statement_timeout', '57014', 'timeout']],
  ['an unreachable server', driverError('connect ECONNREFUSED', { code: 'ECONNREFUSED' }), ['datasource_unavailable', '57P03', 'failed']],
  ['a row over the bound', driverError('vdb_row_too_large', { code: '22023' }), ['result_too_large', '54000', 'failed']],
  ['anything else', driverError('division by zero', { code: '22012' }), ['query_failed', '22012', 'failed']],
];

for (const [name, error, expected] of cases) {
  test(`${name}: every door answers the same, however deep the driver's error is wrapped`, () => {
    for (const wrapped of wrappings(error)) assert.equal(answers(wrapped), expected, `${name}: ${wrapped.message}`);
  });
}

test.run();
