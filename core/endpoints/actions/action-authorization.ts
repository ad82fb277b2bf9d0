import type { Principal } from '../../plugin-api/auth-scheme.js';
import { denialError, isDenial } from '../../plugin-api/denial.js';
import { effectiveGrants } from '../../authorization/grants.js';
import { authorizePlanned, type Authorization, type PlannedStatement } from '../../statements/statement-pipeline.js';
import type { ActionPlan, ActionTarget, PlannedAssertion, PlannedFilter, PlannedWait, PlannedWrite } from './action-plan.js';

/** One statement of a plan: an assertion's or a wait's read, an operation's or a rollback's write. */
export type PlannedActionStatement = PlannedAssertion | PlannedWait | PlannedWrite;

/** The authorization of every statement of a plan, by the planned statement it was given for. */
export type ActionAuthorizations = ReadonlyMap<PlannedActionStatement, Authorization>;

/**
 * Authorizes every statement of an action as the caller before anything runs (the authorize stage of the
 * statement pipeline, docs/authorization.md): assertions and waits read (select), operations and rollbacks
 * write their entity and the columns they assign, and the filters of a write read their columns, as
 * PostgreSQL asks for an UPDATE's WHERE.
 * @throws ForbiddenError `forbidden` naming the first relation or column not granted.
 */
export function authorizeActionPlan(plan: ActionPlan, caller: Principal): ActionAuthorizations {
  const authorizations = new Map<PlannedActionStatement, Authorization>();
  const authorize = (statement: PlannedActionStatement, planned: PlannedStatement) => {
    const decision = authorizePlanned(planned);
    if (isDenial(decision)) throw denialError(decision);
    authorizations.set(statement, decision);
  };
  const plannedOn = (target: ActionTarget, kind: PlannedStatement['kind'], accesses: PlannedStatement['accesses']): PlannedStatement => {
    const { vdb } = target.handle;
    return { vdb, grants: effectiveGrants(vdb, caller), kind, datasource: target.datasource, accesses };
  };
  const write = (statement: PlannedWrite) => authorize(statement, plannedOn(statement.target, statement.type, writeAccesses(statement)));

  for (const assertion of plan.assertions) authorize(assertion, plannedOn(assertion.target, 'select', [read(assertion.target, columnsOf(assertion.filters))]));
  for (const operation of plan.operations) {
    write(operation);
    const { wait, rollback } = operation;
    if (wait) authorize(wait, plannedOn(wait.target, 'select', [read(wait.target, [...wait.fields, ...columnsOf(wait.filters)])]));
    if (rollback) write(rollback);
  }
  return authorizations;
}

type Access = PlannedStatement['accesses'][number];

function writeAccesses(write: PlannedWrite): Access[] {
  const { target, type } = write;
  const own: Access = { ...relationOf(target), action: type, columns: type === 'delete' ? [] : write.assignments.map((assignment) => assignment.column) };
  return write.filters.length > 0 ? [own, read(target, columnsOf(write.filters))] : [own];
}

function read(target: ActionTarget, columns: string[]): Access {
  return { ...relationOf(target), action: 'select', columns };
}

function relationOf(target: ActionTarget): { schema: string; name: string } {
  return { schema: target.relation.schema, name: target.relation.name };
}

function columnsOf(filters: readonly PlannedFilter[]): string[] {
  return [...new Set(filters.map((filter) => filter.column))];
}
