import { InputError } from '../../plugin-api/errors.js';
import type { Datasource } from '../../plugin-api/sql-dialect.js';
import type { VdbRelation } from '../../plugin-api/vdb.js';
import { scalarValue } from '../bound-text.js';
import { DeferredValue } from '../deferred-value.js';
import type {
  ActionBody, AssertionBody, DataType, FilterBody, FilterOperation, OperationBody, OperationType, RollbackBody,
  ValueAssignmentBody, VdbReference, WaitBody,
} from '../endpoint-types.js';
import type { VdbHandle, VdbHandles } from '../../vdb/vdb-handles.js';
import { coerceValue } from './value-coercion.js';

/** A relation an action step reads or writes, and where it lives. */
export interface ActionTarget {
  handle: VdbHandle;
  relation: VdbRelation;
  datasource: Datasource;
  /** `schema.name` as the catalog spells it. */
  entity: string;
}

export interface PlannedFilter {
  column: string;
  operation: FilterOperation;
  /** The bound value; a DeferredValue until the operation runs. IN / NOT_IN hold a list. */
  value: unknown;
}

export interface PlannedAssignment {
  column: string;
  /** Coerced by dataType, or a DeferredValue coerced when it resolves. */
  value: unknown;
  dataType: DataType | undefined;
}

export interface PlannedWrite {
  type: OperationType;
  target: ActionTarget;
  assignments: PlannedAssignment[];
  filters: PlannedFilter[];
}

export interface PlannedWait {
  maxSeconds: number;
  checkEverySeconds: number;
  target: ActionTarget;
  fields: string[];
  filters: PlannedFilter[];
  putInContextVar: string | undefined;
}

export interface PlannedOperation extends PlannedWrite {
  name: string;
  skip: boolean;
  wait: PlannedWait | undefined;
  rollback: PlannedWrite | undefined;
}

export interface PlannedAssertion {
  name: string;
  target: ActionTarget;
  filters: PlannedFilter[];
  expect: 'exists' | 'does_not_exist';
  message: string;
}

export interface ActionPlan {
  assertions: PlannedAssertion[];
  operations: PlannedOperation[];
}

/** A fault of the definition: a `where: message` sentence and the body path of the literal at fault. */
export interface PlanProblem {
  message: string;
  /** Keys and indexes into the rendered body, e.g. `['operations', 1, 'filters', 0, 'field']`. */
  path: (string | number)[];
  /** The name as written (an entity, a column), so the file line that holds it can be found. */
  literal?: string;
}

/** A plan, or what is wrong with the definition. */
export type PlanOutcome = { plan: ActionPlan; problems: [] } | { plan: undefined; problems: PlanProblem[] };

/** Where in the body a step part is: the words of messages and the path to its line. */
interface Where {
  text: string;
  path: (string | number)[];
}

function at(where: Where, key: string, index?: number): Where {
  const path = index === undefined ? [...where.path, key] : [...where.path, key, index];
  return { text: `${where.text}.${key}${index === undefined ? '' : `[${index}]`}`, path };
}

/**
 * Turns a rendered action body into statements to run: VDBs resolved to their handles, entities and columns checked against the
 * catalog, request values resolved and coerced. Faults of the definition are collected as problems; a request
 * value of the wrong type is a 400 (InputError) thrown at once.
 */
export function planAction(body: ActionBody, values: readonly unknown[], fields: Readonly<Record<string, unknown>>, handles: VdbHandles): PlanOutcome {
  const problems: PlanProblem[] = [];
  const fault = (where: Where, message: string, key: string, literal?: string) =>
    void problems.push({ message: `${where.text}: ${message}`, path: [...where.path, key], ...(literal === undefined ? {} : { literal }) });
  const resolve = (value: unknown): unknown => resolveDeep(value, values);

  const targetOf = (where: Where, step: VdbReference, entity: string): ActionTarget | undefined => {
    const name = step.virtualDatabase ?? body.virtualDatabase;
    if (name === undefined) return fault(where, 'set virtualDatabase (on the step or the action)', 'entity');
    const version = step.virtualDatabaseVersion ?? (name === body.virtualDatabase ? body.virtualDatabaseVersion : undefined);
    const handle = handles.lookup(name, version);
    if (typeof handle === 'string') return fault(where, handle, 'virtualDatabase', name);
    const relation = handle.relation(entity);
    if (!relation) return fault(where, `entity ${entity} is not a relation of VDB ${handle.vdb.name} (write <schema>.<relation>)`, 'entity', entity);
    return { handle, relation, datasource: handle.datasourceOf(relation), entity: `${relation.schema}.${relation.name}` };
  };
  /** `key` is where the name is written: `field` of a filter or assignment, or a key of waitUntilEffective. */
  const columnOf = (where: Where, target: ActionTarget, field: string, key = 'field'): string => {
    const columns = target.relation.columns;
    const column = columns.find((candidate) => candidate.name === field)
      ?? columns.filter((candidate) => candidate.name.toLowerCase() === field.toLowerCase()).at(0);
    if (!column) fault(where, `${field} is not a column of ${target.entity}`, key, field);
    return column?.name ?? field;
  };
  const filtersOf = (where: Where, target: ActionTarget, written: readonly FilterBody[] = []): PlannedFilter[] =>
    written.map((filter, index) => ({
      column: columnOf(at(where, 'filters', index), target, filter.field),
      operation: filter.operation,
      value: filterValue(at(where, 'filters', index).text, filter.operation, resolve(filter.value)),
    }));
  const assignmentsOf = (where: Where, target: ActionTarget, written: readonly ValueAssignmentBody[] = []): PlannedAssignment[] =>
    written.map((assignment, index) => {
      const assigned = at(where, 'valueAssignments', index);
      const column = columnOf(assigned, target, assignment.field);
      return { column, value: coerced(assigned.text, resolve(assignment.value), assignment.dataType), dataType: assignment.dataType };
    });
  const stepAt = (section: 'before' | 'operations', index: number, name: string): Where => ({ text: `${section}[${index}] (${name})`, path: [section, index] });

  const assertions = (body.before ?? []).flatMap((assertion: AssertionBody, index): PlannedAssertion[] => {
    const name = String(resolve(assertion.name));
    const where = stepAt('before', index, name);
    const target = targetOf(where, assertion, assertion.entity);
    if (!target) return [];
    const message = resolve(assertion.message);
    return [{ name, target, filters: filtersOf(where, target, assertion.filters), expect: assertion.assertThat, message: String(message ?? '') }];
  });

  const waitOf = (where: Where, target: ActionTarget, wait: WaitBody): PlannedWait => {
    const { byGetting } = wait;
    const waiting = at(at(where, 'waitUntilEffective'), 'byGetting');
    const pairs = Object.entries(byGetting.usingFilterFieldValuePairs ?? {});
    const planned: PlannedFilter[] = pairs.map(([field, value]) => ({
      column: columnOf(at(waiting, 'usingFilterFieldValuePairs'), target, field, field),
      operation: 'EQUAL',
      value: filterValue(waiting.text, 'EQUAL', resolve(value)),
    }));
    for (const field of byGetting.usingFilterFields ?? []) {
      planned.push({ column: columnOf(waiting, target, field, 'usingFilterFields'), operation: 'EQUAL', value: fields[field] ?? null });
    }
    return {
      maxSeconds: wait.maxSeconds,
      checkEverySeconds: wait.checkEverySeconds,
      target,
      fields: byGetting.fields.map((field) => columnOf(waiting, target, field, 'fields')),
      filters: planned,
      putInContextVar: byGetting.putInContextVar,
    };
  };
  const rollbackOf = (where: Where, step: OperationBody, rollback: RollbackBody): PlannedWrite | undefined => {
    const undo = at(where, 'rollback');
    const target = targetOf(undo, step, rollback.entity ?? step.entity);
    if (!target) return undefined;
    return {
      type: rollback.type,
      target,
      assignments: assignmentsOf(undo, target, rollback.valueAssignments),
      filters: filtersOf(undo, target, rollback.filters),
    };
  };

  const operations = body.operations.flatMap((operation: OperationBody, index): PlannedOperation[] => {
    const name = String(resolve(operation.name));
    const where = stepAt('operations', index, name);
    const target = targetOf(where, operation, operation.entity);
    if (!target) return [];
    return [{
      name,
      type: operation.type,
      target,
      skip: skipFlag(where.text, resolve(operation.skipWhenTrue)),
      assignments: assignmentsOf(where, target, operation.valueAssignments),
      filters: filtersOf(where, target, operation.filters),
      wait: operation.waitUntilEffective && waitOf(where, target, operation.waitUntilEffective),
      rollback: operation.rollback && rollbackOf(where, operation, operation.rollback),
    }];
  });
  const names = operations.map((operation) => operation.name);
  const repeated = names.flatMap((name, index) => (names.indexOf(name) !== index ? [index] : []));
  if (repeated.length > 0) {
    const message = `operations: names must be unique (${[...new Set(repeated.map((index) => names[index]))].join(', ')} repeated)`;
    problems.push({ message, path: ['operations', repeated[0] as number, 'name'] });
  }

  return problems.length > 0 ? { plan: undefined, problems } : { plan: { assertions, operations }, problems: [] };
}

/** Placeholders resolved to their values, inside mappings and lists too (a `dataType: json` value). */
function resolveDeep(value: unknown, values: readonly unknown[]): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveDeep(item, values));
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !(value instanceof DeferredValue)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveDeep(item, values)]));
  }
  return scalarValue(value, values);
}

function coerced(where: string, value: unknown, dataType: DataType | undefined): unknown {
  if (value instanceof DeferredValue) return value;
  const result = coerceValue(value, dataType);
  if (!result.ok) throw invalidValue(where, `expected ${result.expected}`);
  return result.value;
}

/** IN and NOT_IN take a list (null: an empty one); the other operations a scalar. */
function filterValue(where: string, operation: FilterOperation, value: unknown): unknown {
  if (operation === 'IN' || operation === 'NOT_IN') {
    if (value === null || value === undefined) return [];
    if (!Array.isArray(value)) throw invalidValue(where, `${operation} needs a list of values`);
    return value;
  }
  return value === undefined ? null : value;
}

function skipFlag(where: string, value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === true) return true;
  throw invalidValue(`${where}.skipWhenTrue`, 'expected true or false');
}

function invalidValue(where: string, reason: string): InputError {
  return new InputError('invalid_body', `${where}: ${reason}`, { details: { at: where } });
}
