import { UpstreamError, validateRuntimeDocument, type PendingAction, type RuntimeSnapshot } from '../../core/plugin-api/index.js';
import { TransientError } from './runtime-resilience.js';

/** Far above any honest snapshot: a runtime answering more is broken, and the service will not buffer it. */
export const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;
/** How many schema problems a protocol error names, each cut short: the message must not carry the body. */
const SHOWN_PROBLEMS = 3;
const PROBLEM_CHARS = 160;

function protocolError(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError('runtime_protocol_error', message, cause === undefined ? {} : { cause });
}

/** The body as text, refusing one longer than `maxBytes` without buffering more than that. */
async function boundedText(response: Response, operation: string, maxBytes: number): Promise<string> {
  const tooLarge = () => protocolError(`the runtime answered ${operation} with more than ${maxBytes} bytes`);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const chunk = await reader.read().catch((error: unknown) => {
      throw new TransientError('the connection broke during the answer', { cause: error });
    });
    if (chunk.done) break;
    size += chunk.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads a 2xx answer of the runtime: a valid `service-task-snapshot` of the task `taskId`, else
 * `runtime_protocol_error` naming the first schema problems. A snapshot without `pendingActions` has none;
 * a working one without `stop` has not stopped.
 */
export async function readSnapshot(response: Response, operation: string, taskId: string, maxBytes: number): Promise<RuntimeSnapshot> {
  const text = await boundedText(response, operation, maxBytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw protocolError(`the runtime answered ${operation} with a body that is not JSON`, error);
  }
  const problems = validateRuntimeDocument('service-task-snapshot', body);
  if (problems.length > 0) {
    const shown = problems.slice(0, SHOWN_PROBLEMS).map((problem) => problem.slice(0, PROBLEM_CHARS)).join('; ');
    const more = problems.length > SHOWN_PROBLEMS ? ` (and ${problems.length - SHOWN_PROBLEMS} more)` : '';
    throw protocolError(`the runtime answered ${operation} with an invalid snapshot: ${shown}${more}`);
  }
  const snapshot = body as Omit<RuntimeSnapshot, 'pendingActions' | 'stop'> & { pendingActions?: PendingAction[]; stop?: RuntimeSnapshot['stop'] };
  if (snapshot.task.taskId !== taskId) throw protocolError(`the runtime answered ${operation} with a snapshot of another task`);
  // a working snapshot may leave out `stop` (the schema requires it once the task has stopped)
  return { ...snapshot, stop: snapshot.stop ?? null, pendingActions: snapshot.pendingActions ?? [] };
}
