/**
 * The semantic query service: compiles queries against the active package of each VDB (compiled SQL cached
 * per query shape: the values of structured filters, limit and offset are bound, not part of the key),
 * and runs it through the statement pipeline: the compiled statement is authorized against the caller's
 * grants before any SQL runs (`authorizeCompiled`), then run as the caller.
 */
import { authorizePlanned, authorizeStatement, explainAuthorized, runAuthorized, withText, type AuthorizedRun } from '../statements/statement-pipeline.js';
import { allows, type CallerGrants } from '../authorization/grants.js';
import { isDenial, type Denial } from '../plugin-api/denial.js';
import { LruCache } from '../caching/lru-cache.js';
import { ConflictError, ForbiddenError, InputError, InternalError } from '../plugin-api/errors.js';
import type { SemanticPackage } from '../plugin-api/semantic-package.js';
import type { SemanticQuery } from '../plugin-api/semantic-query.js';
import type { Datasource, QueryResult, SqlDialect } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { DatasourceRegistry } from '../sql/datasource-registry.js';
import type { VdbHandle, VdbHandles } from '../vdb/vdb-handles.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { readFailure, resultTooLarge, type CallerRead } from '../sql/read-failure.js';
import { JoinPlanner } from './join-planner.js';
import { ModelIndex } from './model-index.js';
import { compileQuery, type CompiledQuery } from './query-compiler.js';
import { queryInvalid } from './query-errors.js';
import { bindings } from './sql-writer.js';

/** Compiled statements kept per package. */
const CACHE_SIZE = 500;

interface PackageState {
  model: ModelIndex;
  planner: JoinPlanner;
  cache: LruCache<string, CompiledQuery>;
}

export interface SemanticQueryRun {
  vdb: VirtualDatabase;
  grants: CallerGrants;
  query: SemanticQuery;
  timeoutMs: number;
  /** The largest result answered, as the JSON of its rows (`server.maxResultBytes`). */
  maxResultBytes: number;
  /** Aborted when the client has gone: the statement is cancelled on the server. */
  signal: AbortSignal;
}

/**
 * What the service reads of the semantic activations: the active package of a VDB, or why it has none.
 * core/semantic's registry, a layer above, answers it; the service names no type of that layer.
 */
export interface ActivePackages {
  packageOf(name: string, version: string): { document: SemanticPackage; federated?: { document: SemanticPackage } | { problem: string } } | undefined;
  find(name: string, version: string): {
    state: string;
    diagnostics: readonly { severity: string; code: string; osiCode: string | null }[];
  } | undefined;
}

export class SemanticQueries {
  private readonly states = new WeakMap<SemanticPackage, PackageState>();

  constructor(
    private readonly semantic: ActivePackages,
    private readonly datasources: DatasourceRegistry,
    private readonly handles: VdbHandles,
  ) {}

  /**
   * A query compiled against the VDB's active package; 409 without one, 400 for a query it cannot answer.
   * Over datasets of several datasources it is written in PostgreSQL's dialect and `federated` is the VDB's
   * handle, which plans it across them (docs/federation.md).
   */
  async compile(vdb: VirtualDatabase, query: SemanticQuery): Promise<{ compiled: CompiledQuery; datasource: Datasource; federated?: VdbHandle }> {
    const pkg = this.activePackage(vdb);
    const state = this.stateOf(pkg, vdb);
    const firstDatasource = pkg.datasets[0]?.relation.datasource ?? vdb.datasource;
    const dialectSource = await this.datasources.open(firstDatasource);
    const compiled = this.compiled(state, dialectSource.dialect, query);
    if (compiled.datasources.length > 1) {
      const handle = this.handles.lookup(vdb.name, vdb.version);
      if (typeof handle === 'string') throw new InternalError('query_failed', handle);
      // written in PostgreSQL's dialect, as the federated plan reads it and the authorizer reads a statement over several datasources
      if (handle.federationDialect.capabilities.postgresqlText !== true) {
        throw new InputError('federation_unsupported', `the query reads datasets of ${compiled.datasources.length} datasources (${compiled.datasources.join(', ')}); a semantic query over several is written in PostgreSQL's dialect, and no installed dialect writes it`, {
          details: { construct: 'a semantic query over several datasources without a PostgreSQL dialect installed' },
        });
      }
      return { compiled: this.compiled(this.federatedState(vdb, pkg), handle.federationDialect, query), datasource: dialectSource, federated: handle };
    }
    const [only = firstDatasource] = compiled.datasources;
    const datasource = only === firstDatasource ? dialectSource : await this.datasources.open(only);
    return { compiled, datasource };
  }

  /** The VDB's active package; 409 `semantic_unavailable` without one. */
  activePackage(vdb: VirtualDatabase): SemanticPackage {
    const pkg = this.semantic.packageOf(vdb.name, vdb.version)?.document;
    if (pkg) return pkg;
    const activation = this.semantic.find(vdb.name, vdb.version);
    const state = activation?.state ?? 'notConfigured';
    // The model's first error, so a caller sees the Foundation's code for a model it refuses (E_AGGREGATE_IN_FIELD, …).
    const cause = activation?.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
    const details = { state, ...(cause && { diagnostic: cause.code, ...(cause.osiCode !== null && { osiCode: cause.osiCode }) }) };
    throw new ConflictError('semantic_unavailable', `VDB ${vdb.name} version ${vdb.version} has no active semantic package (its semantic state is ${state})`, { details });
  }

  private compiled(state: PackageState, dialect: SqlDialect, query: SemanticQuery): CompiledQuery {
    const key = `${dialect.id}\u0000${shapeKey(query)}`;
    let compiled = state.cache.get(key);
    if (!compiled) state.cache.set(key, (compiled = compileQuery(state.model, state.planner, dialect, query)));
    return compiled;
  }

  /** `{sql, params}` without running it (`?explain=true`); over several datasources, the federated plan. */
  async explain(vdb: VirtualDatabase, grants: CallerGrants, query: SemanticQuery): Promise<ReturnType<typeof explainAuthorized>> {
    const authorized = await this.authorize(vdb, grants, query);
    return authorized.federated === undefined ? { sql: authorized.sql, params: [...authorized.bindings] } : explainAuthorized(authorized);
  }

  /** Compiles (render), authorizes (403 before any SQL), runs as the caller (on each source, when federated) and shapes: the statement pipeline. */
  async run({ vdb, grants, query, timeoutMs, maxResultBytes, signal }: SemanticQueryRun): Promise<Pick<QueryResult, 'columns' | 'rows' | 'rowCount'>> {
    const authorized = await this.authorize(vdb, grants, query);
    const read: CallerRead = { subject: 'the semantic query', datasource: authorized.datasource.name, timeoutMs, maxResultBytes };
    let result: QueryResult;
    try {
      result = await runAuthorized(authorized, { timeoutMs, maxRowBytes: maxResultBytes, signal }, { maxBytes: maxResultBytes });
    } catch (error) {
      throw readFailure(error, read, (failure) => {
        if (failure.kind === 'invalid_value') {
          return queryInvalid('E_INVALID_EXPRESSION', 'query', `the database refused a value of the query, one that does not fit its field's type${driverCodeSuffix(error)}`);
        }
        // PostgreSQL's class 42 (no such operator or function for these types): an expression of the caller's.
        if (/^42/.test(String(failure.code))) {
          return queryInvalid('E_INVALID_EXPRESSION', 'query', `the database cannot apply an operator or function of the query to its types${driverCodeSuffix(error)}`);
        }
        return new InternalError('query_failed', `the semantic query failed${driverCodeSuffix(error)}`, { cause: error });
      });
    }
    if (result.truncatedBy === 'maxBytes') throw resultTooLarge(read);
    return { columns: result.columns, rows: result.rows, rowCount: result.rowCount };
  }

  /**
   * The authorize stage: over one datasource the plan's accesses (`authorizeCompiled`); over several, the
   * compiled text through the analyzer, then planned across them (`authorizeStatement`), as every door's.
   */
  private async authorize(vdb: VirtualDatabase, grants: CallerGrants, query: SemanticQuery): Promise<AuthorizedRun> {
    const { compiled, datasource, federated } = await this.compile(vdb, query);
    if (federated === undefined) {
      const authorized = authorizeCompiled(compiled, query, vdb, grants, datasource);
      if (isDenial(authorized)) throw semanticDenialError(authorized);
      return authorized;
    }
    checkColumnReferences(compiled, grants);
    const authorized = await authorizeStatement({ handle: federated, sql: compiled.sql, bindings: bindings(compiled.params, query), grants, readOnly: true });
    if (isDenial(authorized)) throw semanticDenialError(authorized);
    return authorized;
  }

  /**
   * The package a federated query compiles against: the model compiled in the federation's dialect where a
   * dataset's datasource has another (its fields quoted and written as PostgreSQL reads them), else the package.
   */
  private federatedState(vdb: VirtualDatabase, pkg: SemanticPackage): PackageState {
    const federated = this.semantic.packageOf(vdb.name, vdb.version)?.federated;
    if (federated === undefined) return this.stateOf(pkg, vdb);
    if ('problem' in federated) {
      throw new InputError('federation_unsupported', `the query reads datasets of several datasources, and the model does not compile in PostgreSQL's dialect: ${federated.problem}`, {
        details: { construct: 'a model that does not compile in PostgreSQL\'s dialect' },
      });
    }
    return this.stateOf(federated.document, vdb);
  }

  private stateOf(pkg: SemanticPackage, vdb: VirtualDatabase): PackageState {
    let state = this.states.get(pkg);
    if (!state) {
      // An aggregate of a query may read a column of a dataset's relation that no field names.
      const model = new ModelIndex(pkg, ({ relation }) => vdb.catalog.relations.find((candidate) => candidate.datasource === relation.datasource
        && candidate.schema === relation.schema && candidate.name === relation.name)?.columns);
      this.states.set(pkg, (state = { model, planner: new JoinPlanner(model), cache: new LruCache(CACHE_SIZE) }));
    }
    return state;
  }
}

/** A column the query names outside the grants is a name the caller cannot see: the 400 `E_NAME_NOT_FOUND` an unknown name gets. */
function checkColumnReferences(compiled: CompiledQuery, grants: CallerGrants): void {
  for (const { dataset, column, refusal } of compiled.columnReferences) {
    if (!allows(grants, 'select', { schema: dataset.relation.schema, relation: dataset.relation.name, columns: [column] }).allowed) {
      throw queryInvalid('E_NAME_NOT_FOUND', refusal.target, refusal.message);
    }
  }
}

/**
 * The authorize stage for a compiled query (its render stage): a column it names outside the grants is a
 * name the caller cannot see, the 400 `E_NAME_NOT_FOUND` an unknown name gets (thrown); what it reads is
 * checked by the pipeline (`authorizePlanned`), a refusal answered as the `Denial`, counted as `denied`.
 */
export function authorizeCompiled(compiled: CompiledQuery, query: SemanticQuery, vdb: VirtualDatabase, grants: CallerGrants, datasource: Datasource): AuthorizedRun | Denial {
  checkColumnReferences(compiled, grants);
  const accesses = [...compiled.reads].map(([dataset, columns]) => ({ schema: dataset.relation.schema, name: dataset.relation.name, action: 'select' as const, columns: [...columns] }));
  const authorization = authorizePlanned({ vdb, grants, kind: 'select', datasource, accesses });
  return isDenial(authorization) ? authorization : withText(authorization, { sql: compiled.sql, bindings: bindings(compiled.params, query) });
}

/** A semantic query's denial as the route's 403 (nothing has run). */
export function semanticDenialError(denial: Denial): ForbiddenError {
  const resource = denial.resource === undefined ? {} : { resource: denial.resource };
  return new ForbiddenError('forbidden', `the query reads ${denial.resource ?? 'a relation'}: ${denial.reason}`, { details: resource });
}

/** The query without the values that are bound from it: structured filter values (but whether each is null), limit and offset. */
function shapeKey(query: SemanticQuery): string {
  const shape = (predicate: SemanticQuery['where']) => (typeof predicate === 'object'
    ? predicate.map((entry) => (typeof entry === 'string' ? entry : { ...entry, values: entry.values.map((value) => (value === null ? null : '?')) }))
    : predicate);
  return JSON.stringify({ ...query, where: shape(query.where), having: shape(query.having), limit: query.limit !== undefined, offset: query.offset !== undefined });
}
