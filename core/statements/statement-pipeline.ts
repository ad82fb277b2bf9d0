/**
 * The pipeline every statement run for a caller goes through, whatever door it came by
 * (docs/architecture.md#the-request-path-of-a-query), as typed stages:
 *
 *   render (the door's: a definition's text, a task's SQL, a client's text → `RenderedStatement`; an
 *           action's or a semantic query's plan, written by the service → `PlannedStatement`)
 *   → authorize (`authorizeStatement`: the analyzer over the text; `authorizePlanned`: the plan's accesses
 *           against the grants; either picks the one datasource, or answers a `Denial` counted as `denied`)
 *   → run (`runAuthorized`: the runtime seam, as the caller's database role, under the route's bounds)
 *   → shape (the door's: rows as JSON, an action's report, an observation, wire messages; a failure from
 *           its one classification).
 *
 * A statement over several datasources of its VDB is authorized the same way, then planned (core/federation/):
 * its run reads each relation from its source as the caller and answers in the engine; every door gets it by
 * taking these stages.
 */
import { callerScope } from '../authorization/caller-execution.js';
import { allows, effectiveGrants, type CallerGrants } from '../authorization/grants.js';
import { authorizeVdbStatement, type AuthorizedStatement, type RelationAccessFact } from '../authorization/sql-authorizer.js';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { deny, isDenial, type Denial } from '../plugin-api/denial.js';
import type { StatementKind } from '../plugin-api/statement-facts.js';
import type { Datasource, QueryOptions, QueryResult, SqlExecutor } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { DatasourceRuntime, type CallerBounds, type CallerExecutor } from '../sql/datasource-runtime.js';
import { explainFederated, type FederatedPlan } from '../federation/federated-plan.js';
import { runFederated } from '../federation/federated-run.js';
import { cachedPlan } from '../federation/plan-cache.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';

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
 * Stage 1 of a statement the service writes itself from a plan (an action's, a semantic query's): what it
 * reads and writes is known from the plan, so the analyzer need not find it in the text; its datasource too.
 */
export interface PlannedStatement {
  readonly vdb: VirtualDatabase;
  readonly grants: CallerGrants;
  readonly kind: Exclude<StatementKind, 'other'>;
  readonly datasource: Datasource;
  /** Each relation it reads or writes, with the columns it names there (the relation's datasource is the statement's). */
  readonly accesses: readonly Omit<RelationAccessFact, 'datasource'>[];
}

/** Stage 2, authorize: the caller may run the statement, on this one datasource (behind its runtime). */
export interface Authorization {
  readonly vdb: VirtualDatabase;
  readonly grants: CallerGrants;
  /** Runs in a read-only transaction: the route only reads, or the statement does. */
  readonly readOnly: boolean;
  readonly facts: AuthorizedStatement;
  readonly datasource: DatasourceRuntime;
}

/**
 * An authorization with its text: what the run stage runs. Over several datasources, its federated plan
 * (`datasource` is then the VDB's default, which counts the plan), made for these bindings.
 */
export interface AuthorizedRun extends Authorization {
  readonly sql: string;
  readonly bindings: readonly unknown[];
  /** The plan over several datasources, made for the text and values `plannedFor` (the statement's, unless a door bound others since). */
  readonly federated?: { readonly plan: FederatedPlan; readonly handle: VdbHandle; readonly plannedFor: { readonly sql: string; readonly bindings: readonly unknown[] } };
}

/** How a route runs a caller's statements: its mode and its bounds. */
export interface CallerRun extends CallerBounds {
  /** The route only reads (query endpoints, assertions, waits, task queries): the database refuses writes. */
  readOnly: boolean;
}

/** What the run stage may add to a statement's own bounds. */
export interface RunOptions extends Pick<QueryOptions, 'maxRows' | 'maxBytes'> {
  /** In a transaction of its own (an action's write): committed when it succeeds, rolled back when not. */
  transaction?: boolean;
  /**
   * With `transaction`: the service's own work after the statement, in the same transaction under the same
   * role (an action's journal, docs/actions.md#the-journal): both commit or neither does.
   */
  alongside?: (transaction: SqlExecutor, result: QueryResult) => Promise<unknown>;
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
  const { handle, sql, bindings, grants, readOnly } = rendered;
  const decision = await authorizeVdbStatement(handle, sql, grants, readOnly);
  if (isDenial(decision)) {
    countDenied(handle.datasource);
    return decision;
  }
  const { facts } = decision;
  const datasource = handle.datasourceFor(facts.relations);
  if (datasource) return { vdb: handle.vdb, grants, readOnly, facts, datasource: DatasourceRuntime.over(datasource), sql, bindings };
  const counted = DatasourceRuntime.over(handle.datasource);
  try {
    const plan = await cachedPlan(handle, sql, bindings, facts.relations);
    return { vdb: handle.vdb, grants, readOnly, facts, datasource: counted, sql, bindings, federated: { plan, handle, plannedFor: { sql, bindings } } };
  } catch (error) {
    counted.federated('denied');
    throw error;
  }
}

/** What an authorized statement would run, without running it: `{sql, params}` on one datasource, the plan over several. */
export function explainAuthorized(authorized: AuthorizedRun): ReturnType<typeof explainFederated> | { sql: string; params: readonly unknown[] } {
  const { sql, bindings, federated } = authorized;
  return federated === undefined ? { sql, params: bindings } : explainFederated(federated.plan);
}

/**
 * Authorizes a planned statement: each access against the caller's grants (a write's filters as reads, as
 * PostgreSQL asks for an UPDATE's WHERE, are the plan's to list). The first refused is counted as `denied`
 * on the statement's datasource and returned; nothing reaches the database. Its text may come later
 * (`withText`): an action checks every statement before it runs any, and writes a text when it runs it.
 */
export function authorizePlanned(planned: PlannedStatement): Authorization | Denial {
  const { vdb, grants, kind, datasource, accesses } = planned;
  for (const { schema, name, action, columns } of accesses) {
    const check = allows(grants, action, { schema, relation: name, columns });
    if (!check.allowed) {
      countDenied(datasource);
      return deny('forbidden', check.reason, check.resource);
    }
  }
  const relations = accesses.map((access) => ({ ...access, columns: [...access.columns], datasource: datasource.name }));
  const readOnly = kind === 'select';
  return { vdb, grants, readOnly, facts: { kind, readOnly, relations, functions: [] }, datasource: DatasourceRuntime.over(datasource) };
}

/** An authorization with the text it was given for (a planned statement's, written once it runs). */
export function withText(authorization: Authorization, statement: { sql: string; bindings: readonly unknown[] }): AuthorizedRun {
  return { ...authorization, sql: statement.sql, bindings: statement.bindings };
}

/**
 * Runs an authorized statement as the caller's database role, within `bounds`: the run stage, through the
 * runtime seam. `options.transaction` runs it in a transaction of its own under the same role and bounds.
 */
export function runAuthorized(authorized: AuthorizedRun, bounds: CallerBounds, options: RunOptions = {}): Promise<QueryResult> {
  const { vdb, grants, readOnly, datasource, sql, bindings, federated } = authorized;
  if (federated !== undefined) {
    // every pushed statement only reads, whatever the route: the plan is of a SELECT
    const { handle, plan, plannedFor } = federated;
    const context = { vdb, grants, config: handle.federation, counted: datasource };
    if (bindings === plannedFor.bindings && sql === plannedFor.sql) return runFederated(plan, bindings, context, bounds, options);
    // other values than it was authorized with (a prepared statement of the SQL door): the plan for their types, a cache hit when they are the same
    return cachedPlan(handle, sql, bindings, authorized.facts.relations).then((again) => runFederated(again, bindings, context, bounds, options));
  }
  const { timeoutMs, maxRowBytes, signal } = bounds;
  const executor = datasource.forCaller(callerScope(datasource.dialect, vdb, grants, readOnly), { timeoutMs, maxRowBytes, signal });
  // the options as they are, not copied without `transaction`: this is every query request's path
  if (options.transaction) {
    const { alongside } = options;
    return executor.transaction(async (inside) => {
      const result = await inside.query(sql, bindings, options);
      if (alongside) await alongside(inside, result);
      return result;
    });
  }
  return executor.query(sql, bindings, options);
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
