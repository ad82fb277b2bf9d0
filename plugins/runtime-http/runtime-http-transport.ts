import { isBrokenCircuitError, isTaskCancelledError } from 'cockatiel';
import ky from 'ky';
import { messageOf, ServiceError, StartupError, UnavailableError, UpstreamError, type RuntimeSettings, type RuntimeTaskRef, type RuntimeTransport, type RuntimeSnapshot } from '../../core/plugin-api/index.js';
import { MAX_SNAPSHOT_BYTES, readSnapshot } from './runtime-answer.js';
import { DEFAULT_TUNING, runtimePolicy, TransientError, type ResilienceTuning } from './runtime-resilience.js';

/** Internal knobs, deliberately not in service.yaml: tests shorten the waits and the body cap. */
export interface HttpTransportOptions {
  tuning?: Partial<ResilienceTuning>;
  maxBodyBytes?: number;
}

/** One runtime call, as sent on every attempt. */
interface RuntimeCall {
  operation: 'start' | 'advance' | 'read' | 'cancel';
  method: 'PUT' | 'POST' | 'GET' | 'DELETE';
  path: string;
  taskId: string;
  json?: unknown;
}

/** `instances/{instanceId}/vdbs/{vdb}/versions/{version}/tasks/{taskId}`, relative to the base URL. */
function taskPath(ref: RuntimeTaskRef): string {
  const segment = encodeURIComponent;
  return `instances/${segment(ref.instanceId)}/vdbs/${segment(ref.vdb)}/versions/${segment(ref.version)}/tasks/${segment(ref.taskId)}`;
}

/** Statuses after which the same call may succeed. */
function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The `http` runtime transport (docs/runtime/README.md): the four runtime operations over HTTP with ky, made
 * resilient with cockatiel (see runtime-resilience.ts). Every operation is idempotent (start by taskId,
 * advance by sequence), so each is retried. The service's own bearer token is sent, never a caller's.
 */
export function httpRuntimeTransport(settings: RuntimeSettings, options: HttpTransportOptions = {}): RuntimeTransport {
  if (!settings.baseURL) throw new StartupError('runtime.baseURL: required when runtime.transport is http');
  const policy = runtimePolicy(settings.timeoutMs, { ...DEFAULT_TUNING, ...options.tuning });
  const maxBodyBytes = options.maxBodyBytes ?? MAX_SNAPSHOT_BYTES;
  // Aborted by close(): calls in flight end at once, and so do later ones.
  const closing = new AbortController();
  const client = ky.create({
    prefix: settings.baseURL,
    // cockatiel times out and retries; ky only sends, and statuses are classified below.
    retry: 0,
    timeout: false,
    throwHttpErrors: false,
    // A runtime has no reason to redirect, and following one could carry the token elsewhere.
    redirect: 'manual',
    headers: { accept: 'application/json', ...(settings.bearerToken ? { authorization: `Bearer ${settings.bearerToken}` } : {}) },
  });

  async function attempt(call: RuntimeCall, signal: AbortSignal): Promise<RuntimeSnapshot> {
    let response: Response;
    try {
      response = await client(call.path, { method: call.method, signal, ...(call.json === undefined ? {} : { json: call.json }) });
    } catch (error) {
      // Aborted: the timeout (or close) has already decided the outcome of this attempt.
      if (signal.aborted) throw error;
      throw new TransientError('unreachable', { cause: error });
    }
    if (isTransientStatus(response.status)) {
      await response.body?.cancel();
      throw new TransientError(`answered ${response.status}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new UpstreamError('runtime_failed', `the runtime refused ${call.operation}: ${response.status}`);
    }
    return readSnapshot(response, call.operation, call.taskId, maxBodyBytes);
  }

  function unavailable(call: RuntimeCall, error: unknown, attempts: number): UnavailableError {
    const tries = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
    const reason = closing.signal.aborted ? 'the transport is closed'
      : isBrokenCircuitError(error) ? `the circuit is open after repeated failures (${tries})`
        : isTaskCancelledError(error) ? `no answer within ${settings.timeoutMs} ms (${tries})`
          : `${messageOf(error)} (${tries})`;
    return new UnavailableError('runtime_unavailable', `the runtime is unavailable for ${call.operation}: ${reason}`, { cause: error });
  }

  async function send(call: RuntimeCall): Promise<RuntimeSnapshot> {
    let attempts = 0;
    try {
      return await policy.execute(({ signal }) => {
        attempts += 1;
        return attempt(call, signal);
      }, closing.signal);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      throw unavailable(call, error, attempts);
    }
  }

  return {
    start: (ref, document) => send({ operation: 'start', method: 'PUT', path: taskPath(ref), taskId: ref.taskId, json: document }),
    advance: (ref, document) => send({ operation: 'advance', method: 'POST', path: `${taskPath(ref)}/advances`, taskId: ref.taskId, json: document }),
    read: (ref) => send({ operation: 'read', method: 'GET', path: taskPath(ref), taskId: ref.taskId }),
    cancel: (ref) => send({ operation: 'cancel', method: 'DELETE', path: taskPath(ref), taskId: ref.taskId }),
    async close() {
      closing.abort();
    },
  };
}
