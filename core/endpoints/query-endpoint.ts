import { denialError, isDenial } from '../plugin-api/denial.js';
import { callerExecutor } from '../authorization/caller-execution.js';
import { effectiveGrants } from '../authorization/grants.js';
import { authorizeVdbStatement } from '../authorization/sql-authorizer.js';
import { InputError, InternalError } from '../plugin-api/errors.js';
import { recordDenied } from '../sql/observed-datasource.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { readFailure, resultTooLarge, type ReadContext } from '../sql/read-failure.js';
import type { JsonValue, ResultColumn, SqlExecutor } from '../plugin-api/sql-dialect.js';
import { toSql } from './bound-text.js';
import { QUERY_BODY_SCHEMA } from './definition-body-schema.js';
import { asServiceError, renderBody, requireFields, type EndpointRequest } from './endpoint-request.js';
import type { QueryBody } from './endpoint-types.js';
import type { CompiledDefinition } from '../plugin-api/template-engine.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { refusedValueError } from './refused-value.js';
import { sqlBinding } from './sql-binding-values.js';

/** The 200 body of `POST /api/v1/query/perform/{name}` (docs/endpoints.md). */
export interface QueryResponse {
  rows: Record<string, JsonValue>[];
  rowCount: number;
  columns: ResultColumn[];
}

/** A registered query definition, bound to its VDB at startup. */
export class QueryEndpoint {
  constructor(
    readonly name: string,
    private readonly definition: CompiledDefinition,
    readonly bound: VdbHandle,
    readonly neededFields: readonly string[],
  ) {}

  /** Renders, binds, authorizes as the caller (a single read-only statement) and runs the query. */
  async perform(request: EndpointRequest): Promise<QueryResponse> {
    requireFields(this.neededFields, request.fields);
    const { vdb, dialect } = this.bound;
    const rendered = renderBody(this.definition, QUERY_BODY_SCHEMA, this.bound, request);
    const body = rendered.document as QueryBody;
    if (body.query.trim() === '') throw new InputError('invalid_body', `query ${this.name} renders no SQL for these fields`);
    const { sql, bindings } = asServiceError(() => toSql(body.query, rendered.values, { dialect, origin: rendered.origin }));
    const grants = effectiveGrants(vdb, request.caller);
    const decision = await authorizeVdbStatement(this.bound, sql, grants, true);
    if (isDenial(decision)) {
      recordDenied(this.bound.datasource);
      throw denialError(decision);
    }
    const datasource = this.bound.datasourceFor(decision.facts.relations);
    if (!datasource) {
      const names = [...new Set(decision.facts.relations.map((relation) => relation.datasource))];
      throw new InputError('cross_datasource_query', `query ${this.name} reads relations of ${names.length} datasources (${names.join(', ')}); federation is not available`);
    }
    const { maxResultBytes, timeoutMs, signal } = request;
    const executor = callerExecutor(datasource, vdb, grants, { readOnly: true, timeoutMs, maxRowBytes: maxResultBytes, signal });
    const read: ReadContext = { subject: `query ${this.name}`, datasource: datasource.name, timeoutMs, maxResultBytes };
    const result = await runQuery(this.name, read, executor, sql, bindings.map(sqlBinding), request.fields);
    if (result.truncatedBy === 'maxBytes') throw resultTooLarge(read);
    return { rows: result.rows, rowCount: result.rowCount, columns: result.columns };
  }

}

/**
 * Runs the statement as the caller, reading at most `maxResultBytes` of rows; a value the database refuses
 * is the caller's 400, what every read route answers alike is `readFailure`'s, anything else ours.
 */
async function runQuery(name: string, read: ReadContext, executor: SqlExecutor, sql: string, bindings: unknown[], fields: EndpointRequest['fields']) {
  try {
    return await executor.query(sql, bindings, { maxBytes: read.maxResultBytes });
  } catch (error) {
    throw readFailure(error, read, (failure) => (failure.kind === 'invalid_value'
      ? refusedValueError(name, failure, fields)
      : new InternalError('query_failed', `query ${name} failed${driverCodeSuffix(failure)}`, { cause: failure.driverError })));
  }
}
