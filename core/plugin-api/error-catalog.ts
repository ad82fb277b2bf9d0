/**
 * Every error code the service and its built-in plugins answer, with its HTTP status, whether a client may
 * retry, a default message and the envelope(s) it is answered in. docs/errors.md is generated from it
 * (scripts/error-table.mjs) and a suite checks the two agree.
 *
 * The status of a code is defined here and nowhere else. The error classes of errors.ts are categories
 * derived from it: each accepts exactly the codes of its status, so `new NotFoundError('invalid_body')`
 * does not compile, and the HTTP edge reads the status from this catalog, never from the class. Classes stay
 * because code branches on the kind of failure (`instanceof UnavailableError`), not on single codes.
 *
 * A route declares the envelope of its errors (`answersIn` in core/server/request-context.ts); `envelopes`
 * says where a code is answered, `inTaskEnvelope` how the Task API spells the failures it shares.
 *
 * Authorization denials are not codes of their own: they answer `forbidden` with the authorizer's code in
 * `details.denial` (docs/authorization.md), except `statement_too_complex`, which is the caller's 400.
 * Semantic diagnostics (docs/diagnostics.md) are not HTTP errors.
 */

/**
 * The body an error is answered in: `standard` is `{code, message, details}`, `task` the Task API's
 * `service-task-error` envelope (docs/tasks.md), which the reference runtime answers too.
 */
export type ErrorEnvelope = 'standard' | 'task';

/** The statuses the service answers errors with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 406 | 408 | 409 | 413 | 415 | 422 | 500 | 502 | 503 | 504;

/** `Code` is the type of the codes an entry may name; the exported catalog checks they are catalogued. */
export interface ErrorDefinition<Code extends string = string> {
  /** The status it is answered with, wherever it is thrown: the class it is thrown with cannot differ. */
  status: ErrorStatus;
  /** Whether the same request may succeed later; the task envelope answers it as `retryable`. */
  retryable: boolean;
  /** Said when the thrower gives no message, or when the edge must not repeat the thrower's words. */
  message: string;
  /** One line on when it is answered, for docs/errors.md. */
  meaning: string;
  /** The envelopes it is answered in, under its own name. */
  envelopes: readonly ErrorEnvelope[];
  /**
   * For a failure of the shared request handling (credentials, body) that the Task API spells its own way:
   * the code answered there instead, keeping the message or saying that code's default one.
   */
  inTaskEnvelope?: { code: Code; keepMessage: boolean };
}

const STANDARD = ['standard'] as const;
const TASK = ['task'] as const;
const BOTH = ['standard', 'task'] as const;
/** The Task API has one 401 code for its clients, whatever the scheme's reason (docs/tasks.md). */
const TASK_UNAUTHENTICATED = { code: 'unauthenticated', keepMessage: true } as const;

const CATALOG = {
  invalid_request: {
    status: 400, retryable: false, message: 'the request is not valid', envelopes: BOTH,
    meaning: 'Task API: the body cannot be read, is not a JSON object, or has a malformed `externalContextId` or `artifactIds`; reference runtime: a document names another task than its path; restify: a request it refused (its 4xx without a code here keep their own status); admin model export: a `format` other than `ossie`.',
  },
  semantic_query_invalid: {
    status: 400, retryable: false, message: 'the semantic query cannot be answered by the model', envelopes: STANDARD,
    meaning: 'Semantic query API: the query is malformed or the model cannot answer it safely; `details.osiCode` is the OSI Foundation error code (`E_NO_PATH`, `E_AMBIGUOUS_PATH`, ...), `details.target` the part of the query at fault.',
  },
  invalid_body: {
    status: 400, retryable: false, message: 'the body is not valid', envelopes: STANDARD,
    inTaskEnvelope: { code: 'invalid_request', keepMessage: true },
    meaning: 'The body is not valid JSON or YAML, nests deeper than 64 levels, is not a mapping of fields, or a value does not fit its `dataType`, filter, deferred value or query.',
  },
  missing_fields: {
    status: 400, retryable: false, message: 'the body lacks needed fields', envelopes: STANDARD,
    meaning: 'Fields the endpoint needs are absent or null; `details.missing` lists them.',
  },
  unknown_identifier: {
    status: 400, retryable: false, message: 'the identifier is not in the catalog', envelopes: STANDARD,
    meaning: '`| identifier` got a name that is not a relation or column of the VDB; `details.identifier` names it.',
  },
  federation_unsupported: {
    status: 400, retryable: false, message: 'the statement over several datasources uses a construct the federated plan cannot evaluate', envelopes: STANDARD,
    meaning: 'A statement reads relations of several datasources and uses a construct the federated plan cannot evaluate with PostgreSQL\'s semantics (docs/federation.md); `details.construct` names it. Nothing ran.',
  },
  statement_too_complex: {
    status: 400, retryable: false, message: 'the statement is too complex to authorize', envelopes: STANDARD,
    meaning: 'A query\'s SQL is longer than `sql.maxStatementBytes`, or nests too deeply or has too many terms to be parsed and authorized; nothing ran. The Task API reports it as a `denied` observation.',
  },
  invalid_goal: {
    status: 400, retryable: false, message: 'goal must be a non-empty string', envelopes: TASK,
    meaning: 'The task request has no `goal`, an empty one, or one longer than 16384 characters.',
  },
  unknown_capability: {
    status: 400, retryable: false, message: 'unknown capability', envelopes: TASK,
    meaning: 'The capability of the task route is not in `capabilities`.',
  },
  invalid_vdb: {
    status: 400, retryable: false, message: 'the VDB name and version are 1-128 letters, digits, _ . or -', envelopes: TASK,
    meaning: 'The VDB name or version of the task route is not 1-128 letters, digits, `_ . -`.',
  },
  invalid_json: {
    status: 400, retryable: false, message: 'the body is not JSON', envelopes: TASK,
    meaning: 'Reference runtime: the body of a start or advance is not JSON.',
  },
  invalid_document: {
    status: 400, retryable: false, message: 'the document is not valid', envelopes: TASK,
    meaning: 'Reference runtime: a start or advance document does not match its schema (docs/runtime/).',
  },
  unauthenticated: {
    status: 401, retryable: false, message: 'no authenticated caller', envelopes: BOTH,
    meaning: 'No authenticated caller: on the Task API, any refused credential (with the bare challenge); at the reference runtime, a request without its bearer token.',
  },
  credentials_missing: {
    status: 401, retryable: false, message: 'no credentials', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'The request carries no credentials; the challenge names no error.',
  },
  credentials_malformed: {
    status: 401, retryable: false, message: 'the credentials are malformed', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'The `Authorization` header is not of the scheme\'s form, or the token is not a well-formed JWT.',
  },
  token_unknown: {
    status: 401, retryable: false, message: 'the bearer token is not known', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'Bearer scheme: the token is not one of the configured tokens.',
  },
  token_expired: {
    status: 401, retryable: false, message: 'the token has expired', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'JWT scheme: the token is past its `exp`.',
  },
  token_not_yet_valid: {
    status: 401, retryable: false, message: 'the token is not valid yet', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'JWT scheme: the token is before its `nbf`.',
  },
  signature_invalid: {
    status: 401, retryable: false, message: 'the token signature is not valid for this service', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'JWT scheme: no configured key verifies the signature.',
  },
  claim_invalid: {
    status: 401, retryable: false, message: 'a claim of the token is invalid', envelopes: STANDARD, inTaskEnvelope: TASK_UNAUTHENTICATED,
    meaning: 'JWT scheme: the issuer, audience, subject or roles claim is missing or wrong.',
  },
  forbidden: {
    status: 403, retryable: false, message: 'the caller is not allowed', envelopes: STANDARD,
    meaning: 'The caller\'s roles do not allow it: a statement outside its grants (`details.denial`, `details.resource`), refused by the authorizer or by the database as the caller\'s role, no data role on the VDB, or the admin API without an admin role.',
  },
  not_found: {
    status: 404, retryable: false, message: 'no such route', envelopes: STANDARD,
    meaning: 'No route has this path.',
  },
  vdb_not_found: {
    status: 404, retryable: false, message: 'the VDB is not active', envelopes: BOTH,
    meaning: 'No active VDB of that name (and version).',
  },
  unknown_query: {
    status: 404, retryable: false, message: 'no query of that name', envelopes: STANDARD,
    meaning: 'No query endpoint definition of that name.',
  },
  unknown_action: {
    status: 404, retryable: false, message: 'no action of that name', envelopes: STANDARD,
    meaning: 'No action endpoint definition of that name.',
  },
  route_not_found: {
    status: 404, retryable: false, message: 'no such route', envelopes: TASK,
    meaning: 'Reference runtime: no runtime route has this method and path.',
  },
  task_not_found: {
    status: 404, retryable: false, message: 'no such task', envelopes: TASK,
    meaning: 'Reference runtime: no task of that id on that instance and VDB.',
  },
  method_not_allowed: {
    status: 405, retryable: false, message: 'method not allowed on this route', envelopes: STANDARD,
    meaning: 'The route exists but not for this method.',
  },
  not_acceptable: {
    status: 406, retryable: false, message: 'no acceptable representation', envelopes: STANDARD,
    meaning: 'restify cannot answer in a media type the `Accept` header allows.',
  },
  request_timeout: {
    status: 408, retryable: true, message: 'the request took too long to arrive', envelopes: STANDARD,
    meaning: 'restify gave up waiting for the request.',
  },
  ambiguous_vdb_version: {
    status: 409, retryable: false, message: 'the VDB has several active versions', envelopes: TASK,
    meaning: 'The versionless task route names a VDB with several active versions: use the versioned route.',
  },
  assertion_failed: {
    status: 409, retryable: false, message: 'an assertion of the action did not hold', envelopes: STANDARD,
    meaning: 'An assertion of an action did not hold; the message is the assertion\'s; nothing ran.',
  },
  operation_conflict: {
    status: 409, retryable: false, message: 'an operation broke a constraint', envelopes: STANDARD,
    meaning: 'An operation broke a constraint or a value did not fit its column, after compensation; `details.operations` lists each.',
  },
  semantic_unavailable: {
    status: 409, retryable: false, message: 'the VDB has no active semantic package', envelopes: STANDARD,
    meaning: 'Semantic query API: the VDB is active but its semantic model is not (`catalogOnly`, invalid or failed to compile); `details.state`, and for a refused model `details.osiCode` of its first error; the admin API says more.',
  },
  semantic_package_unavailable: {
    status: 409, retryable: false, message: 'the VDB has no semantic package', envelopes: STANDARD,
    meaning: 'Admin API: the package of a VDB whose semantic state is not `active`; the body is the VDB detail (`state`, `diagnostics`, …, whose diagnostics say why) with `code`, `message` and an empty `details` beside it.',
  },
  sequence_out_of_order: {
    status: 409, retryable: false, message: 'the advance is out of order', envelopes: TASK,
    meaning: 'Reference runtime: an advance whose `sequence` is not the next one.',
  },
  task_not_working: {
    status: 409, retryable: false, message: 'the task waits for no observation', envelopes: TASK,
    meaning: 'Reference runtime: an advance of a task that has ended.',
  },
  result_too_large: {
    status: 422, retryable: false, message: 'the result is too large', envelopes: STANDARD,
    meaning: 'The query\'s result is larger than `server.maxResultBytes` (`details.limitBytes`; 16 MiB by default, counted as the JSON of its rows); the service stopped reading it at the limit and cancelled the statement. Select fewer rows or smaller columns.',
  },
  body_too_large: {
    status: 413, retryable: false, message: 'the request body is too large', envelopes: STANDARD,
    inTaskEnvelope: { code: 'request_too_large', keepMessage: false },
    meaning: 'The body is over `server.maxBodyBytes`.',
  },
  request_too_large: {
    status: 413, retryable: false, message: 'the task request is larger than server.maxBodyBytes', envelopes: TASK,
    meaning: 'The task request is over `server.maxBodyBytes`, a runtime document over `runtime.transportLimitBytes`, or a body over the reference runtime\'s 2 MiB.',
  },
  unsupported_media_type: {
    status: 415, retryable: false, message: 'unsupported media type', envelopes: STANDARD,
    inTaskEnvelope: { code: 'invalid_request', keepMessage: true },
    meaning: 'The body is neither JSON nor YAML.',
  },
  internal_error: {
    status: 500, retryable: false, message: 'internal error', envelopes: BOTH,
    meaning: 'Anything unexpected: the answer says no more, the log keeps the cause. The reference runtime\'s own says `retryable: true`, as the service retries a runtime\'s 5xx anyway.',
  },
  query_failed: {
    status: 500, retryable: false, message: 'the query failed', envelopes: STANDARD,
    meaning: 'The database refused a query for a reason that is not the caller\'s.',
  },
  operation_failed: {
    status: 500, retryable: false, message: 'the operation failed', envelopes: STANDARD,
    meaning: 'An action operation failed otherwise, after compensation.',
  },
  definition_error: {
    status: 500, retryable: false, message: 'the definition is invalid for this request', envelopes: STANDARD,
    meaning: 'An endpoint definition rendered into an invalid body for this request; names the file.',
  },
  runtime_failed: {
    status: 502, retryable: false, message: 'the runtime refused the call', envelopes: TASK,
    meaning: 'The agent runtime refused a call (4xx).',
  },
  runtime_protocol_error: {
    status: 502, retryable: false, message: 'the runtime answered an invalid snapshot', envelopes: TASK,
    meaning: 'The agent runtime answered something that is not a valid snapshot of this task.',
  },
  datasource_unavailable: {
    status: 503, retryable: true, message: 'the datasource is unavailable', envelopes: STANDARD,
    meaning: 'A datasource cannot be reached, or the connection of a statement was lost while it ran (the database restarted, the session was terminated) (after compensation, for actions); `details.datasource` names it. The service serves again as soon as the database is back.',
  },
  startup_blocked: {
    status: 503, retryable: false, message: 'the service did not start', envelopes: STANDARD,
    meaning: 'A semantic model whose policy is blockStartup failed: every route but health and the admin API, the Task API included, answers it before routing.',
  },
  semantic_initializing: {
    status: 503, retryable: true, message: 'semantic activation has not finished yet', envelopes: STANDARD,
    meaning: 'The semantic admin API before semantic activation has finished.',
  },
  runtime_disabled: {
    status: 503, retryable: false, message: 'the agent runtime is disabled in this deployment', envelopes: TASK,
    meaning: '`runtime.enabled` is false.',
  },
  runtime_unavailable: {
    status: 503, retryable: true, message: 'the runtime is unavailable', envelopes: TASK,
    meaning: 'The agent runtime is unreachable, timed out or failing, after retries, or its circuit is open.',
  },
  context_unavailable: {
    status: 503, retryable: true, message: 'the data of the VDB cannot be reached now', envelopes: TASK,
    meaning: 'The datasource of the task\'s VDB does not answer.',
  },
  wait_timeout: {
    status: 504, retryable: false, message: 'the awaited row did not appear in time', envelopes: STANDARD,
    meaning: '`waitUntilEffective` found no matching row in time, after compensation.',
  },
  statement_timeout: {
    status: 504, retryable: false, message: 'the statement ran out of time', envelopes: STANDARD,
    meaning: 'A statement run for the request outran its time limit (`server.requestTimeoutMs`) and the database cancelled it, or the database did not answer within the limit and 2 s more and the service gave the statement up (its connection closed); nothing it would have written stays. The same request will likely run as long again: narrow it.',
  },
} as const satisfies Record<string, ErrorDefinition>;

/** Every code of the error catalog. */
export type ErrorCode = keyof typeof CATALOG;

/** Every code's definition; a translation in `inTaskEnvelope` to a code not catalogued does not compile. */
export const ERROR_CATALOG: Readonly<Record<ErrorCode, ErrorDefinition<ErrorCode>>> = CATALOG;

/** The codes answered with status `S`: what the error class of that status accepts. */
export type CodeOfStatus<S extends ErrorStatus> = {
  [C in ErrorCode]: (typeof CATALOG)[C]['status'] extends S ? C : never;
}[ErrorCode];
