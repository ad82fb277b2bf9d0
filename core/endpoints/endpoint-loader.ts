import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import type { Logger } from 'pino';
import { isDenial } from '../plugin-api/denial.js';
import { authorizeVdbStatement } from '../authorization/sql-authorizer.js';
import { displayPath } from '../config/yaml-source.js';
import { callerExecutor } from '../statements/statement-pipeline.js';
import { planFederated } from '../federation/federated-plan.js';
import { effectiveGrants } from '../authorization/grants.js';
import { ForbiddenError, InputError, type StartupProblem } from '../plugin-api/errors.js';
import type { Datasource, SqlExecutor } from '../plugin-api/sql-dialect.js';
import type { TemplateFunctionModule } from '../plugin-api/template-engine.js';
import { ActionEndpoint } from './action-endpoint.js';
import { planAction } from './actions/action-plan.js';
import { toSql } from './bound-text.js';
import { ACTION_BODY_SCHEMA, bodyProblemsAt, QUERY_BODY_SCHEMA } from './definition-body-schema.js';
import { definitionLine } from './definition-lines.js';
import { DefinitionError } from './definition-error.js';
import { EndpointRegistry } from './endpoint-registry.js';
import type { ActionBody, QueryBody } from './endpoint-types.js';
import { QueryEndpoint } from './query-endpoint.js';
import type { ActionJournals } from './actions/action-journal.js';
import type { RenderContext, RenderedDefinition, TemplateEngine } from '../plugin-api/template-engine.js';
import type { VdbHandle, VdbHandles } from '../vdb/vdb-handles.js';

export interface EndpointLoading {
  descriptors: string;
  engine: TemplateEngine;
  functions: readonly TemplateFunctionModule[];
  handles: VdbHandles;
  /** The datasources whose database roles are in place: queries are planned there as the data roles. */
  governed: ReadonlySet<Datasource>;
  /** Where action runs are journaled (docs/actions.md#the-journal). */
  journals: ActionJournals;
  logger: Logger;
}

export interface LoadedEndpoints {
  registry: EndpointRegistry;
  /** Errors (the service must not start) and warnings (e.g. each `| raw`), as `file:line: message`. */
  problems: StartupProblem[];
}

type Kind = 'query' | 'action';

/**
 * Compiles every definition of `queries/` and `actions/` once, renders it with no request fields to check
 * its body (schema, needed fields used, VDB, entities and columns, SQL bound and within the catalog), and
 * registers what passed. Each file's problems are listed; one bad file does not hide another's.
 */
export async function loadEndpoints(loading: EndpointLoading): Promise<LoadedEndpoints> {
  const problems: StartupProblem[] = [];
  const queries = new Map<string, QueryEndpoint>();
  const actions = new Map<string, ActionEndpoint>();
  for (const kind of ['query', 'action'] as const) {
    for (const path of definitionFiles(join(loading.descriptors, kind === 'query' ? 'queries' : 'actions'))) {
      const file = displayPath(path);
      const name = basename(path, extname(path));
      const fileProblems: StartupProblem[] = [];
      const fail = (message: string, line?: number) => fileProblems.push({ file, ...(line === undefined ? {} : { line }), message, severity: 'error' });
      if ((kind === 'query' ? queries : actions).has(name)) {
        fail(`a ${kind} named ${name} is already defined (one file per name: .yaml or .yml)`);
      } else {
        const endpoint = await checkDefinition(kind, { name, file, source: readFileSync(path, 'utf8') }, loading, fileProblems, fail);
        if (endpoint instanceof QueryEndpoint) queries.set(name, endpoint);
        else if (endpoint instanceof ActionEndpoint) actions.set(name, endpoint);
      }
      problems.push(...fileProblems);
    }
  }
  return { registry: new EndpointRegistry(queries, actions), problems };
}

type Fail = (message: string, line?: number) => void;

async function checkDefinition(
  kind: Kind, source: { name: string; file: string; source: string }, loading: EndpointLoading, problems: StartupProblem[], failAnywhere: Fail,
): Promise<QueryEndpoint | ActionEndpoint | undefined> {
  // a problem found nowhere more precise points at the first line of the body
  const bodyLine = definitionLine(source.source, { document: undefined, origin: { file: source.file, lines: [] } }, { path: [] });
  const fail: Fail = (message, line) => failAnywhere(message, line ?? bodyLine);
  const definition = attempt(fail, () => loading.engine.compile(source, loading.functions));
  if (!definition) return undefined;
  problems.push(...definition.warnings);
  const lineOf = (key: string) => keyLine(source.source, key);

  const unchecked = attempt(fail, () => definition.render({}, probeContext(undefined).context));
  if (!unchecked) return undefined;
  const schemaProblems = bodyProblemsAt(kind === 'query' ? QUERY_BODY_SCHEMA : ACTION_BODY_SCHEMA, unchecked.document);
  for (const problem of schemaProblems) fail(problem.message, definitionLine(source.source, unchecked, problem));
  if (schemaProblems.length > 0) return undefined;

  const needed = kind === 'query' ? ((unchecked.document as QueryBody).neededFields ?? []) : ((unchecked.document as ActionBody).needed?.fields ?? []);
  for (const field of needed.filter((candidate) => !definition.variables.includes(candidate))) {
    fail(`needed field ${field} is never used by the template`, lineOf(kind === 'query' ? 'neededFields' : 'needed'));
  }

  const { description } = unchecked.document as QueryBody | ActionBody;
  const handle = handleOf(kind, unchecked.document, loading.handles);
  if (typeof handle === 'string') return void fail(handle, lineOf('virtualDatabase'));
  const probe = probeContext(handle);
  const rendered = attempt(fail, () => definition.render({}, probe.context));
  if (!rendered) return undefined;

  if (kind === 'query') {
    const warn: Fail = (message, line) => problems.push({ file: source.file, ...(line === undefined ? {} : { line }), message, severity: 'warning' });
    await checkQuerySql(rendered, handle, loading.governed, probe.dynamicIdentifiers(), fail, warn, lineOf('query'));
    return problems.some((problem) => problem.severity === 'error') ? undefined : new QueryEndpoint(source.name, definition, handle, needed, description);
  }
  checkActionPlan(rendered, source.source, loading.handles, fail);
  return problems.some((problem) => problem.severity === 'error')
    ? undefined
    : new ActionEndpoint(source.name, definition, handle, needed, loading.handles, loading.logger, loading.journals, description);
}

/** The quoted-placeholder check, then the catalog: every relation and column the SQL names must exist. */
async function checkQuerySql(
  rendered: RenderedDefinition, handle: VdbHandle, governed: ReadonlySet<Datasource>, dynamicIdentifiers: boolean, fail: Fail, warn: Fail,
  queryLine: number | undefined,
): Promise<void> {
  const text = (rendered.document as QueryBody).query;
  const sql = attempt(fail, () => toSql(text, rendered.values, { dialect: handle.dialect, origin: rendered.origin }));
  // a query built only by loops over fields is empty without them: it is checked per request
  if (text.trim() === '') return;
  // names chosen per request (`| identifier` over a field) are checked then; the probe cannot know them
  if (!sql || dynamicIdentifiers) return;
  const decision = await authorizeVdbStatement(handle, sql.sql, { access: 'complete', roles: [], grants: [] }, true);
  if (!isDenial(decision) && handle.datasourceFor(decision.facts.relations) === undefined) {
    // over several datasources: no one database plans it, the federated plan must
    return planFederated(handle, sql.sql, sql.bindings, decision.facts.relations).then(() => undefined, (error: unknown) => {
      if (error instanceof InputError) fail(`query: ${error.message}`, queryLine);
      else throw error;
    });
  }
  if (!isDenial(decision)) return explainQuery(governed.has(handle.datasource) ? plannerOf(handle) : handle.datasource, handle, sql, fail, warn, queryLine);
  // loops over absent fields can leave SQL that only parses with values (`in ()`): checked per request
  if (decision.code === 'unparseable') warn(`query: not checked against the catalog, as it does not parse without request fields (${decision.reason})`, queryLine);
  else fail(`query: ${decision.reason}`, queryLine);
}

/** SQLSTATE / errno of a name the database does not know: undefined column or table, in PostgreSQL and MySQL. */
const UNKNOWN_NAME_CODES = new Set(['42703', '42P01', '42883', 'ER_BAD_FIELD_ERROR', 'ER_NO_SUCH_TABLE', 'ER_SP_DOES_NOT_EXIST']);

/**
 * Asks the database to plan the query (EXPLAIN, with null values): it knows every column, alias and function,
 * where the authorizer only knows relations. Dialects without that capability are checked per request.
 */
async function explainQuery(
  planner: SqlExecutor, handle: VdbHandle, sql: { sql: string; bindings: unknown[] }, fail: Fail, warn: Fail, queryLine: number | undefined,
): Promise<void> {
  if (!handle.dialect.capabilities.explain) return;
  const explain = `explain ${sql.sql}`;
  try {
    await planner.query(explain, sql.bindings.map(() => null));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // knex prefixes the driver's message with the statement
    const message = error instanceof Error ? error.message : String(error);
    const reason = (message.startsWith(`${explain} - `) ? message.slice(explain.length + 3) : message).split('\n')[0];
    if (typeof code === 'string' && UNKNOWN_NAME_CODES.has(code)) fail(`query: ${reason}`, queryLine);
    else warn(`query: the database could not plan it without request values (${reason})`, queryLine);
  }
}

/** How long the startup EXPLAIN of one query may take. */
const EXPLAIN_TIMEOUT_MS = 10_000;

/**
 * Where the data roles' database roles are in place, EXPLAIN runs as the role of every data role of the VDB
 * at once (or the VDB's role), as the database checks privileges when it plans: the login itself may hold
 * none (docs/governed-execution.md). Without such a role (an empty `dataRoles`, too many to combine), as the
 * login.
 */
function plannerOf(handle: VdbHandle): SqlExecutor {
  const { vdb, datasource } = handle;
  const everyRole = effectiveGrants(vdb, { subject: 'startup-check', roles: (vdb.dataRoles ?? []).map((role) => role.name), scheme: 'startup-check' });
  try {
    return callerExecutor(datasource, vdb, everyRole, { readOnly: true, timeoutMs: EXPLAIN_TIMEOUT_MS });
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return datasource;
  }
}

/** Plans the action with no request fields: every entity and column it names must be in the catalog. */
function checkActionPlan(rendered: RenderedDefinition, source: string, handles: VdbHandles, fail: Fail): void {
  try {
    const outcome = planAction(rendered.document as ActionBody, rendered.values, {}, handles);
    for (const problem of outcome.problems) fail(problem.message, definitionLine(source, rendered, problem));
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    fail(error.message);
  }
}

/** A query's VDB; an action's top-level VDB, else the one of its first step (for `| identifier`). */
function handleOf(kind: Kind, document: unknown, handles: VdbHandles): VdbHandle | string {
  if (kind === 'query') {
    const body = document as QueryBody;
    return handles.lookup(body.virtualDatabase, body.virtualDatabaseVersion);
  }
  const body = document as ActionBody;
  const step = body.virtualDatabase === undefined ? [...(body.before ?? []), ...body.operations].find((candidate) => candidate.virtualDatabase !== undefined) : body;
  if (step?.virtualDatabase === undefined) return 'the action names no virtualDatabase';
  return handles.lookup(step.virtualDatabase, step.virtualDatabaseVersion);
}

/**
 * The render context of the startup check. Without a VDB, identifiers are quoted unchecked; with one, a
 * literal name is checked against its catalog and a name from a (null) field is noted as dynamic.
 */
function probeContext(handle: VdbHandle | undefined): { context: RenderContext; dynamicIdentifiers(): boolean } {
  let dynamic = false;
  const base = handle?.renderContext(probeRequestContext(handle.vdb.name));
  return {
    context: {
      _context: probeRequestContext(handle?.vdb.name ?? ''),
      identifier: (name) => {
        if (name === '' || !base) {
          dynamic = true;
          return `"${name.replaceAll('"', '""') || 'probe'}"`;
        }
        return base.identifier(name);
      },
    },
    dynamicIdentifiers: () => dynamic,
  };
}

function probeRequestContext(vdb: string) {
  return { vdb, requestId: 'startup-check', caller: { subject: 'startup-check' }, now: new Date(0) };
}

function attempt<T>(fail: Fail, step: () => T): T | undefined {
  try {
    return step();
  } catch (error) {
    if (error instanceof DefinitionError) return void fail(error.toProblem().message, error.line);
    if (error instanceof InputError) return void fail(error.message);
    throw error;
  }
}

/** The first line where `key:` is written, so a problem points near its cause. */
function keyLine(source: string, key: string): number | undefined {
  if (key === '' || key === 'body') return undefined;
  const at = source.split('\n').findIndex((line) => new RegExp(`^\\s*(- )?${key.replace(/[^A-Za-z0-9_]/g, '')}\\s*:`).test(line));
  return at >= 0 ? at + 1 : undefined;
}

function definitionFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter((entry) => /\.ya?ml$/.test(entry)).sort().map((entry) => join(folder, entry));
}
