import type { Principal } from '../../plugin-api/auth-scheme.js';
import { deny, denialError } from '../../plugin-api/denial.js';
import { allows, effectiveGrants } from '../../authorization/grants.js';
import type { DataAction } from '../../plugin-api/vdb.js';
import { countDenied } from '../../statements/statement-pipeline.js';
import type { ActionPlan, ActionTarget, PlannedFilter, PlannedWrite } from './action-plan.js';

interface Access {
  target: ActionTarget;
  action: DataAction;
  columns: string[];
}

/**
 * Checks every statement of an action against the caller's grants before anything runs (docs/authorization.md):
 * assertions and waits read (select), operations and rollbacks write their entity and the columns they
 * assign, and the filters of a write read their columns, as PostgreSQL asks for an UPDATE's WHERE.
 * @throws ForbiddenError `forbidden` naming the first relation or column not granted.
 */
export function authorizeActionPlan(plan: ActionPlan, caller: Principal): void {
  const accesses: Access[] = [];
  for (const assertion of plan.assertions) accesses.push(read(assertion.target, assertion.filters));
  for (const operation of plan.operations) {
    accesses.push(...writeAccesses(operation));
    if (operation.wait) accesses.push({ ...read(operation.wait.target, operation.wait.filters), columns: [...operation.wait.fields, ...columnsOf(operation.wait.filters)] });
    if (operation.rollback) accesses.push(...writeAccesses(operation.rollback));
  }
  for (const { target, action, columns } of accesses) {
    const check = allows(effectiveGrants(target.handle.vdb, caller), action, { schema: target.relation.schema, relation: target.relation.name, columns });
    if (!check.allowed) {
      countDenied(target.datasource);
      throw denialError(deny('forbidden', check.reason, check.resource));
    }
  }
}

function writeAccesses(write: PlannedWrite): Access[] {
  const own: Access = { target: write.target, action: write.type, columns: write.type === 'delete' ? [] : write.assignments.map((assignment) => assignment.column) };
  return write.filters.length > 0 ? [own, read(write.target, write.filters)] : [own];
}

function read(target: ActionTarget, filters: readonly PlannedFilter[]): Access {
  return { target, action: 'select', columns: columnsOf(filters) };
}

function columnsOf(filters: readonly PlannedFilter[]): string[] {
  return [...new Set(filters.map((filter) => filter.column))];
}
