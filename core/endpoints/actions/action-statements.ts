import type { Knex } from 'knex';
import { InternalError, InputError } from '../../plugin-api/errors.js';
import { DeferredValue } from '../deferred-value.js';
import { sqlBinding } from '../sql-binding-values.js';
import type { ActionTarget, PlannedAssertion, PlannedFilter, PlannedWait, PlannedWrite } from './action-plan.js';
import { coerceValue } from './value-coercion.js';

/** One statement built by knex for the target's dialect, with `?` bindings. */
export interface BuiltStatement {
  sql: string;
  bindings: unknown[];
}

/** The action's context variables (`putInContextVar`), which deferred values read. */
export type ActionContext = Record<string, unknown>;

const COMPARISONS: Partial<Record<PlannedFilter['operation'], string>> = {
  EQUAL: '=', NOT_EQUAL: '<>', GREATER_THAN: '>', GREATER_THAN_OR_EQUAL: '>=', LESS_THAN: '<', LESS_THAN_OR_EQUAL: '<=', LIKE: 'like',
};

/** `select 1 ... where <filters> limit 1`: does a row exist? */
export function existenceStatement(assertion: PlannedAssertion, context: ActionContext): BuiltStatement {
  const { target } = assertion;
  const query = from(target).select(target.datasource.knex.raw('1 as present')).limit(1);
  return built(applyFilters(query, assertion.filters, context));
}

/** The first row matching the wait's filters, with the fields it reads. */
export function waitStatement(wait: PlannedWait, context: ActionContext): BuiltStatement {
  return built(applyFilters(from(wait.target).select(wait.fields), wait.filters, context).limit(1));
}

/** The insert, update or delete of an operation or a rollback. */
export function writeStatement(write: PlannedWrite, context: ActionContext): BuiltStatement {
  const row = Object.fromEntries(write.assignments.map((assignment) => [assignment.column, assignedValue(assignment.value, assignment.dataType, context)]));
  const table = write.target.datasource.knex.withSchema(write.target.relation.schema).table(write.target.relation.name);
  switch (write.type) {
    case 'insert':
      return built(table.insert(row));
    case 'update':
      return built(applyFilters(table, write.filters, context).update(row));
    case 'delete':
      return built(applyFilters(table, write.filters, context).delete());
  }
}

function from(target: ActionTarget): Knex.QueryBuilder {
  return target.datasource.knex.withSchema(target.relation.schema).from(target.relation.name);
}

function applyFilters(query: Knex.QueryBuilder, filters: readonly PlannedFilter[], context: ActionContext): Knex.QueryBuilder {
  for (const filter of filters) {
    const value = resolved(filter.value, context);
    const comparison = COMPARISONS[filter.operation];
    switch (filter.operation) {
      case 'IN':
        query.whereIn(filter.column, (value as unknown[]).map((item) => sqlBinding(resolved(item, context)) as Knex.Value));
        break;
      case 'NOT_IN':
        query.whereNotIn(filter.column, (value as unknown[]).map((item) => sqlBinding(resolved(item, context)) as Knex.Value));
        break;
      case 'IS_NULL':
        query.whereNull(filter.column);
        break;
      case 'IS_NOT_NULL':
        query.whereNotNull(filter.column);
        break;
      default:
        // `= null` matches nothing in SQL; an author comparing to null means IS NULL
        if (value === null && filter.operation === 'EQUAL') query.whereNull(filter.column);
        else if (value === null && filter.operation === 'NOT_EQUAL') query.whereNotNull(filter.column);
        else query.where(filter.column, comparison as string, sqlBinding(value) as Knex.Value);
    }
  }
  return query;
}

function built(query: Knex.QueryBuilder): BuiltStatement {
  const { sql, bindings } = query.toSQL();
  return { sql, bindings: [...bindings] };
}

/** A deferred value read from the context now: its variable must have been set by an earlier operation. */
export function resolved(value: unknown, context: ActionContext): unknown {
  if (!(value instanceof DeferredValue)) return value;
  const found = value.resolveIn(context);
  if (found === undefined) {
    throw new InternalError('operation_failed', `deferred value ${value.contextVar} is not available: no earlier operation put ${value.variable} in the context`);
  }
  return found;
}

function assignedValue(value: unknown, dataType: PlannedWrite['assignments'][number]['dataType'], context: ActionContext): unknown {
  if (!(value instanceof DeferredValue)) return value;
  const coerced = coerceValue(resolved(value, context), dataType);
  if (!coerced.ok) throw new InputError('invalid_body', `deferred value ${value.contextVar}: expected ${coerced.expected}`);
  return coerced.value;
}
