import { InternalError, InputError } from '../../plugin-api/errors.js';
import type { BuiltStatement, TableFilter } from '../../plugin-api/sql-dialect.js';
import { boundValue } from '../bound-text.js';
import { DeferredValue } from '../deferred-value.js';
import type { ActionTarget, PlannedAssertion, PlannedFilter, PlannedWait, PlannedWrite } from './action-plan.js';
import { coerceValue } from './value-coercion.js';

/** The action's context variables (`putInContextVar`), which deferred values read. */
export type ContextVariables = Record<string, unknown>;

/** `select 1 ... where <filters> limit 1`: does a row exist? */
export function existenceStatement(assertion: PlannedAssertion, context: ContextVariables): BuiltStatement {
  const { target } = assertion;
  return target.datasource.buildStatement({ kind: 'exists', table: tableOf(target), filters: tableFilters(assertion.filters, context) });
}

/** The first row matching the wait's filters, with the fields it reads. */
export function waitStatement(wait: PlannedWait, context: ContextVariables): BuiltStatement {
  return wait.target.datasource.buildStatement({ kind: 'first', table: tableOf(wait.target), columns: wait.fields, filters: tableFilters(wait.filters, context) });
}

/** The insert, update or delete of an operation or a rollback. */
export function writeStatement(write: PlannedWrite, context: ContextVariables): BuiltStatement {
  const { datasource } = write.target;
  const table = tableOf(write.target);
  const values = () => Object.fromEntries(write.assignments.map((assignment) => [assignment.column, assignedValue(assignment.value, assignment.dataType, context)]));
  switch (write.type) {
    case 'insert':
      return datasource.buildStatement({ kind: 'insert', table, values: values() });
    case 'update':
      return datasource.buildStatement({ kind: 'update', table, values: values(), filters: tableFilters(write.filters, context) });
    case 'delete':
      return datasource.buildStatement({ kind: 'delete', table, filters: tableFilters(write.filters, context) });
  }
}

function tableOf(target: ActionTarget) {
  return { schema: target.relation.schema, name: target.relation.name };
}

/** The filters with their values resolved and bindable. */
function tableFilters(filters: readonly PlannedFilter[], context: ContextVariables): TableFilter[] {
  return filters.map(({ column, operation, value: planned }): TableFilter => {
    const value = resolved(planned, context);
    switch (operation) {
      case 'IN':
      case 'NOT_IN':
        return { column, operation, value: (value as unknown[]).map((item) => boundValue(resolved(item, context))) };
      case 'IS_NULL':
      case 'IS_NOT_NULL':
        return { column, operation };
      default:
        // `= null` matches nothing in SQL; an author comparing to null means IS NULL
        if (value === null && operation === 'EQUAL') return { column, operation: 'IS_NULL' };
        if (value === null && operation === 'NOT_EQUAL') return { column, operation: 'IS_NOT_NULL' };
        return { column, operation, value: boundValue(value) };
    }
  });
}

/** A deferred value read from the context now: its variable must have been set by an earlier operation. */
export function resolved(value: unknown, context: ContextVariables): unknown {
  if (!(value instanceof DeferredValue)) return value;
  const found = value.resolveIn(context);
  if (found === undefined) {
    throw new InternalError('operation_failed', `deferred value ${value.contextVar} is not available: no earlier operation put ${value.variable} in the context`);
  }
  return found;
}

function assignedValue(value: unknown, dataType: PlannedWrite['assignments'][number]['dataType'], context: ContextVariables): unknown {
  if (!(value instanceof DeferredValue)) return value;
  const coerced = coerceValue(resolved(value, context), dataType);
  if (!coerced.ok) throw new InputError('invalid_body', `deferred value ${value.contextVar}: expected ${coerced.expected}`);
  return coerced.value;
}
