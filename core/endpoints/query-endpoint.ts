import { denialError, isDenial } from '../plugin-api/denial.js';
import { InputError, InternalError } from '../plugin-api/errors.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { readFailure, resultTooLarge, type CallerRead } from '../sql/read-failure.js';
import type { JsonValue, QueryResult, ResultColumn } from '../plugin-api/sql-dialect.js';
import { authorizeStatement, explainAuthorized, grantsOn, runAuthorized, type AuthorizedRun, type RenderedStatement } from '../statements/statement-pipeline.js';
import { boundValue, toSql } from './bound-text.js';
import { QUERY_BODY_SCHEMA } from './definition-body-schema.js';
import { asServiceError, renderBody, requireFields, type EndpointRequest } from './endpoint-request.js';
import type { QueryBody } from './endpoint-types.js';
import type { CompiledDefinition } from '../plugin-api/template-engine.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { refusedValueError } from './refused-value.js';

/** The 200 body of `POST /api/v1/query/perform/{name}` (docs/endpoints.md). */
export interface QueryResponse {
  rows: Record<string, JsonValue>[];
  rowCount: number;
  columns: ResultColumn[];
}

/** A registered query definition and the handle of its VDB, resolved at startup. */
export class QueryEndpoint {
  constructor(
    readonly name: string,
    private readonly definition: CompiledDefinition,
    readonly handle: VdbHandle,
    readonly neededFields: readonly string[],
    /** The definition's `description`, for the documents that describe it (OpenAPI, MCP). */
    readonly description?: string,
  ) {}

  /** The statement pipeline (core/statements/statement-pipeline.ts): render, authorize, run, shape. */
  async perform(request: EndpointRequest): Promise<QueryResponse> {
    const authorized = await this.authorize(this.render(request));
    const read: CallerRead = { subject: `query ${this.name}`, datasource: authorized.datasource.name, timeoutMs: request.timeoutMs, maxResultBytes: request.maxResultBytes };
    return this.shape(read, await this.run(authorized, read, request));
  }

  /** What `perform` would run for the request, authorized the same way, without running it (`?explain=true`). */
  async explain(request: EndpointRequest): Promise<ReturnType<typeof explainAuthorized>> {
    return explainAuthorized(await this.authorize(this.render(request)));
  }

  /** Renders the definition for the request's fields, its values bound, as the caller's read-only statement. */
  private render(request: EndpointRequest): RenderedStatement {
    requireFields(this.neededFields, request.fields);
    const rendered = renderBody(this.definition, QUERY_BODY_SCHEMA, this.handle, request);
    const body = rendered.document as QueryBody;
    if (body.query.trim() === '') throw new InputError('invalid_body', `query ${this.name} renders no SQL for these fields`);
    const { sql, bindings } = asServiceError(() => toSql(body.query, rendered.values, { dialect: this.handle.dialect, origin: rendered.origin }));
    return { handle: this.handle, sql, bindings: bindings.map(boundValue), grants: grantsOn(this.handle, request.caller), readOnly: true };
  }

  /** A single read-only statement within the caller's grants, on one datasource or planned over several. */
  private async authorize(rendered: RenderedStatement): Promise<AuthorizedRun> {
    const decision = await authorizeStatement(rendered);
    if (isDenial(decision)) throw denialError(decision);
    return decision;
  }

  /**
   * Runs the statement as the caller, reading at most `maxResultBytes` of rows; a value the database refuses
   * is the caller's 400, what every read route answers alike is `readFailure`'s, anything else ours.
   */
  private async run(authorized: AuthorizedRun, read: CallerRead, request: EndpointRequest): Promise<QueryResult> {
    const { maxResultBytes, timeoutMs, signal } = request;
    try {
      return await runAuthorized(authorized, { timeoutMs, maxRowBytes: maxResultBytes, signal }, { maxBytes: maxResultBytes });
    } catch (error) {
      throw readFailure(error, read, (failure) => (failure.kind === 'invalid_value'
        ? refusedValueError(this.name, failure, request.fields)
        : new InternalError('query_failed', `query ${this.name} failed${driverCodeSuffix(failure)}`, { cause: failure.driverError })));
    }
  }

  private shape(read: CallerRead, result: QueryResult): QueryResponse {
    if (result.truncatedBy === 'maxBytes') throw resultTooLarge(read);
    return { rows: result.rows, rowCount: result.rowCount, columns: result.columns };
  }
}
