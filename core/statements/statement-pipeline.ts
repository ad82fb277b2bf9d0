/**
 * The pipeline every statement run for a caller goes through, whatever door it came by
 * (docs/architecture.md#the-request-path-of-a-query), as typed stages:
 *
 *   render (the door's: a definition, a task's action, a semantic query, a client's text)
 *   → authorize (`authorizeStatement`: the analyzer, the datasource, the caller's database role)
 *   → run (`runAuthorized`, `callerExecutor`: the runtime seam, under the role and the route's bounds)
 *   → shape (the door's: rows as JSON, an observation, wire messages; a failure from its one classification).
 *
 * A statement over several datasources of its VDB is authorized the same way, then planned (core/federation/):
 * its run reads each relation from its source as the caller and answers in the engine.
 */
import { callerScope } from '../authorization/caller-execution.js';
import { effectiveGrants, type CallerGrants } from '../authorization/grants.js';
import { authorizeVdbStatement, type AuthorizedStatement } from '../authorization/sql-authorizer.js';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { isDenial, type Denial } from '../plugin-api/denial.js';
import type { Datasource, QueryOptions, QueryResult } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { DatasourceRuntime, type CallerBounds, type CallerExecutor } from '../sql/datasource-runtime.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { explainFederated, planFederated, type FederatedPlan } from '../federation/federated-plan.js';
import { runFederated } from '../federation/federated-run.js';

export type { CallerExecutor };

/** Stage 1, render: a statement a door made for a caller, as text with its bound values, on a VDB. */
export interface RenderedStatement {
  readonly handle: VdbHandle;
  readonly sql: string;
  readonly bindings: readonly unknown[];
  readonly grants: CallerGrants;
  /** The route only reads (query endpoints, task queries, a read-only door): the database refuses writes. */
  readonly readOnly: boolean;
}

/**
 * Stage 2, authorize: what the analyzer found, and the one datasource (behind its runtime) that runs it; for
 * a statement over several datasources, its federated plan (`datasource` is then the VDB's default).
 */
export interface AuthorizedRun {
  readonly rendered: RenderedStatement;
  readonly facts: AuthorizedStatement;
  readonly datasource: DatasourceRuntime;
  readonly federated?: FederatedPlan;
}

/** How a route runs a caller's statements: its mode and its bounds. */
export interface CallerRun extends CallerBounds {
  /** The route only reads (query endpoints, assertions, waits, task queries): the database refuses writes. */
  readOnly: boolean;
}

/** The caller's grants on a handle's VDB: the first thing a door renders for. */
export function grantsOn(handle: VdbHandle, caller: Principal): CallerGrants {
  return effectiveGrants(handle.vdb, caller);
}

/**
 * Authorizes a rendered statement: the analyzer checks it against the caller's grants, then the datasource
 * of the relations it reads is picked, or, when they live in several, the statement is planned across them.
 * A refusal is counted as `denied` on the VDB's datasource and returned, for the door to word; nothing
 * reaches the database.
 * @throws InputError `federation_unsupported` for a statement over several datasources the plan cannot evaluate.
 */
export async function authorizeStatement(rendered: RenderedStatement): Promise<AuthorizedRun | Denial> {
  const { handle, sql, grants, readOnly } = rendered;
  const decision = await authorizeVdbStatement(handle, sql, grants, readOnly);
  if (isDenial(decision)) {
    countDenied(handle.datasource);
    return decision;
  }
  const datasource = handle.datasourceFor(decision.facts.relations);
  if (datasource) return { rendered, facts: decision.facts, datasource: DatasourceRuntime.over(datasource) };
  const counted = DatasourceRuntime.over(handle.datasource);
  try {
    const federated = await planFederated(handle, sql, rendered.bindings, decision.facts.relations);
    return { rendered, facts: decision.facts, datasource: counted, federated };
  } catch (error) {
    counted.federated('denied');
    throw error;
  }
}

/** What an authorized statement would run, without running it: `{sql, params}` on one datasource, the plan over several. */
export function explainAuthorized(authorized: AuthorizedRun): ReturnType<typeof explainFederated> | { sql: string; params: readonly unknown[] } {
  const { rendered, federated } = authorized;
  return federated === undefined ? { sql: rendered.sql, params: rendered.bindings } : explainFederated(federated);
}

/**
 * Runs an authorized statement as the caller, within `bounds`: the run stage of a single statement.
 * `bindings`, where given, replace the rendered statement's (a prepared statement of the SQL door, run with each Bind's values).
 */
export function runAuthorized(authorized: AuthorizedRun, bounds: CallerBounds, options?: QueryOptions, bindings?: readonly unknown[]): Promise<QueryResult> {
  const { rendered, datasource, federated } = authorized;
  const { timeoutMs, maxRowBytes, signal } = bounds;
  if (federated !== undefined) {
    const { handle, grants, readOnly } = rendered;
    const context = { vdb: handle.vdb, grants, readOnly, config: handle.federation, counted: datasource };
    if (bindings === undefined) return runFederated(federated, context, bounds, options);
    // planned again with this run's values, so that its predicates on them are pushed too
    return planFederated(handle, rendered.sql, bindings, authorized.facts.relations).then((plan) => runFederated(plan, context, bounds, options));
  }
  if (bindings !== undefined) return runAuthorized({ ...authorized, rendered: { ...rendered, bindings } }, bounds, options);
  const executor = datasource.forCaller(callerScope(datasource.dialect, rendered.handle.vdb, rendered.grants, rendered.readOnly), { timeoutMs, maxRowBytes, signal });
  return executor.query(rendered.sql, rendered.bindings, options);
}

/**
 * A caller's statements on `datasource`, through its runtime, as the database role of their grants on
 * `vdb` (`callerScope`) and within the route's bounds.
 * @throws ForbiddenError when no database role stands for the grants.
 */
export function callerExecutor(datasource: Datasource, vdb: VirtualDatabase, grants: CallerGrants, run: CallerRun): CallerExecutor {
  return DatasourceRuntime.over(datasource).forCaller(callerScope(datasource.dialect, vdb, grants, run.readOnly), run);
}

/** Counts a statement refused before it ran (the analyzer's, a grant check's) as `denied` on `datasource`. */
export function countDenied(datasource: Datasource): void {
  DatasourceRuntime.over(datasource).denied();
}
