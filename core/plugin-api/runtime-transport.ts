import type { RuntimeSnapshot, TaskAdvanceDocument, TaskStartDocument } from './task-documents.js';

/** Where a runtime task lives: `/instances/{instanceId}/vdbs/{vdb}/versions/{version}/tasks/{taskId}`. */
export interface RuntimeTaskRef {
  instanceId: string;
  vdb: string;
  version: string;
  taskId: string;
}

/**
 * The contract of a `runtimeTransport` plugin: the four runtime operations (docs/runtime/README.md).
 * Every answer is a validated `service-task-snapshot`. Failures are ServiceErrors:
 * - `UnavailableError('runtime_unavailable')` (503, retryable): unreachable, timed out, 5xx after retries,
 *   circuit open;
 * - `UpstreamError('runtime_failed')` (502): the runtime refused the call (4xx);
 * - `UpstreamError('runtime_protocol_error')` (502): an answer that is not a valid snapshot for this task.
 */
export interface RuntimeTransport {
  /** PUT: idempotent by taskId. */
  start(ref: RuntimeTaskRef, document: TaskStartDocument): Promise<RuntimeSnapshot>;
  /** POST .../advances: idempotent by sequence. */
  advance(ref: RuntimeTaskRef, document: TaskAdvanceDocument): Promise<RuntimeSnapshot>;
  /** GET. */
  read(ref: RuntimeTaskRef): Promise<RuntimeSnapshot>;
  /** DELETE: the runtime stops the task; resolves with its last snapshot. */
  cancel(ref: RuntimeTaskRef): Promise<RuntimeSnapshot>;
  /** Frees timers and connections at shutdown. */
  close?(): Promise<void>;
}

/** The settings a transport is created with (`runtime` in service.yaml). */
export interface RuntimeSettings {
  /** For `http`: the runtime's base URL. */
  baseURL: string | undefined;
  /** Per call, before retries. */
  timeoutMs: number;
  /** The service's own credential toward the runtime (never the caller's). */
  bearerToken: string | undefined;
}

/** What a `runtimeTransport` plugin registers. */
export interface RuntimeTransportFactory {
  create(settings: RuntimeSettings): RuntimeTransport;
}
