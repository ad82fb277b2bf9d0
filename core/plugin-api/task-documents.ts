/**
 * The documents of the Task API and of the runtime boundary (docs/tasks.md, docs/runtime/README.md).
 * JSON Schemas of the four runtime documents are in docs/runtime/ and are checked on both
 * sides: the service validates what a runtime answers, the reference runtime what the service sends.
 */
import type { CatalogForeignKey, CatalogFunction, CatalogRelation, LogicalType } from './catalog.js';
import type { ErrorCode } from './error-catalog.js';
import type { JsonValue, ResultColumn, SqlFamily } from './sql-dialect.js';
import type { PackageDataset, PackageMetric, PackageRelationship } from './semantic-package.js';
import type { SemanticQuery } from './semantic-query.js';

/** The states of a task. */
export const TASK_STATES = ['working', 'input_required', 'completed', 'cancelled', 'budget_exceeded', 'failed'] as const;
/** One of `TASK_STATES`. */
export type TaskState = (typeof TASK_STATES)[number];
/** States after which the runtime does nothing more for the task. */
export const TERMINAL_STATES: readonly TaskState[] = ['input_required', 'completed', 'cancelled', 'budget_exceeded', 'failed'];

/** The kinds of artifact a task produces. */
export const ARTIFACT_KINDS = ['answer', 'table', 'query', 'report', 'log'] as const;
/** One of `ARTIFACT_KINDS`. */
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** Why a task stopped. */
export const STOP_REASONS = ['completed', 'input_required', 'cancelled', 'budget_exceeded', 'runtime_failed', 'deadline_exceeded'] as const;
/** One of `STOP_REASONS`. */
export type StopReason = (typeof STOP_REASONS)[number];

/**
 * `complete`: the VDB has no dataRoles, every authenticated caller may do everything;
 * `restricted`: the grants of the caller's matching roles; `unavailable`: no role matched, nothing is allowed.
 */
export type AccessLevel = 'complete' | 'restricted' | 'unavailable';

/** A column the caller may read, with its logical type. */
export interface AuthorizedColumn {
  name: string;
  logicalType: LogicalType;
  nullable: boolean;
}

/** A relation the caller may read, with the columns it may read and its keys. */
export interface AuthorizedRelation {
  schema: string;
  name: string;
  /**
   * The datasource it lives in (a key of `datasources` in service.yaml): a statement reading relations of
   * several datasources is federated, in PostgreSQL's dialect, with what that plan can evaluate (docs/federation.md).
   */
  datasource: string;
  kind: CatalogRelation['kind'];
  columns: AuthorizedColumn[];
  /** The primary key, when the caller sees all of its columns; else empty. */
  primaryKey: string[];
  /** Foreign keys whose columns the caller sees at both ends. */
  foreignKeys: CatalogForeignKey[];
}

/** Budgets of a task: the service's defaults (`runtime.budgets`) overridden per capability. */
export interface TaskBudgets {
  maxSteps: number;
  maxServiceActions: number;
  maxObservationRows: number;
  maxObservationBytes: number;
  maxModelCalls: number;
  maxInputTokens: number;
  maxOutputTokens: number;
  maxDurationSeconds: number;
}

/** The semantic surface the caller may see: the active package, cut to the visible datasets, fields and metrics. */
export interface AuthorizedSemantic {
  packageDigest: string;
  datasets: PackageDataset[];
  relationships: PackageRelationship[];
  metrics: PackageMetric[];
}

/** What the runtime may plan with (docs/tasks.md). Never a credential, never the caller's identity. */
export interface AuthorizedContext {
  vdb: { name: string; version: string };
  catalogRevision: string;
  /** The SQL grammar of the VDB's datasource: proposed queries are written in it. */
  sqlFamily: SqlFamily;
  /** The package digest of the active semantic model; null when the VDB has none active. */
  semanticRevision: string | null;
  access: AccessLevel;
  relations: AuthorizedRelation[];
  functions: Pick<CatalogFunction, 'schema' | 'name' | 'kind' | 'returnType'>[];
  semantic: AuthorizedSemantic | null;
}

/** PUT .../tasks/{taskId}: start a task (idempotent by taskId). */
export interface TaskStartDocument {
  format: 'service-task-start';
  formatVersion: 1;
  taskId: string;
  instanceId: string;
  capability: string;
  vdb: { name: string; version: string };
  goal: string;
  externalContextId: string | null;
  externalContext: { contentType: 'application/json'; data: JsonValue } | null;
  artifactIds: string[];
  authorizedContext: AuthorizedContext;
  budgets: TaskBudgets;
}

/** An action the runtime asks the service to run as the caller. */
export type PendingAction =
  /** One read-only statement in the dialect of the VDB, re-authorized as the caller. */
  | { actionId: string; kind: 'query'; sql: string; maxRows: number }
  /** A semantic query (docs/semantic-query.md), compiled by the service against the VDB's active package. */
  | { actionId: string; kind: 'semanticQuery'; query: SemanticQuery; maxRows: number };

/** The outcome of one pending action the service ran for the runtime. */
export interface Observation {
  actionId: string;
  status: 'ok' | 'denied' | 'failed';
  columns: ResultColumn[];
  rows: Record<string, JsonValue>[];
  rowCount: number;
  truncated: boolean;
  /** Why the action was denied or failed; null when ok. */
  error: { code: string; message: string } | null;
}

/** POST .../advances: the results of the pending actions (idempotent by sequence). */
export interface TaskAdvanceDocument {
  format: 'service-task-advance';
  formatVersion: 1;
  taskId: string;
  /** 1 for the first advance, then +1 per advance. */
  sequence: number;
  observations: Observation[];
}

/** One result a runtime produced for the task (an answer, a table, a query, a report, a log). */
export interface Artifact {
  id: string;
  kind: ArtifactKind;
  /** `data` is Base64 of the bytes; `contentType` says how to read them. */
  content: { contentType: string; data: string };
}

/** What a task consumed, as the Task API reports it. */
export interface TaskUsage {
  inputTokens: number;
  outputTokens: number;
  modelCalls: number;
  serviceActions: number;
  observationRows: number;
  observationBytes: number;
}

/** What the runtime reports of model usage; the service counts the rest itself. */
export type RuntimeUsage = Pick<TaskUsage, 'inputTokens' | 'outputTokens' | 'modelCalls'>;

/** The VDB a task runs against. */
export interface TaskTarget {
  instanceId: string;
  vdbName: string;
  vdbVersion: string;
}

/** What every snapshot holds, the runtime's and the Task API's. */
interface SnapshotCommon {
  format: 'service-task-snapshot';
  formatVersion: 1;
  task: { taskId: string; target: TaskTarget };
  capability: string;
  state: TaskState;
  artifacts: Artifact[];
}

/** The runtime's answer to start, advance and read; `pendingActions` only while `working`. */
export interface RuntimeSnapshot extends SnapshotCommon {
  usage: RuntimeUsage;
  stop: { reason: StopReason; detail: string } | null;
  pendingActions: PendingAction[];
}

/** The terminal snapshot the Task API answers (docs/tasks.md). */
export interface TaskSnapshot extends SnapshotCommon {
  usage: TaskUsage;
  stop: { reason: StopReason; detail: string };
}

/** The Task API's error body (docs/tasks.md). */
export interface TaskErrorEnvelope {
  format: 'service-task-error';
  formatVersion: 1;
  code: ErrorCode;
  message: string;
  retryable: boolean;
}
