/**
 * A lone `tools/call` answered by the door itself, around the SDK's server and transport (docs/mcp.md): the
 * SDK's path (its transport's web `Request` and `Response`, the zod parses of every message and result, the
 * protocol's bookkeeping) cost a tool call about as much again as the tool itself (bench/README.md). Only a
 * message whose every part is read here takes this path; anything else goes to the SDK unchanged, which
 * keeps the handshake, the session, the other methods and every refusal of the protocol's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CancelledNotificationSchema, RELATED_TASK_META_KEY, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** A `tools/call` the door answers: its id, the tool's name and arguments. */
export interface DirectCall {
  id: RequestId;
  name: string;
  args: Readonly<Record<string, unknown>>;
}

const ENVELOPE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta']);

/**
 * The call, when `body` is one `tools/call` the SDK would take and answer as JSON on this request: the
 * transport's checks (both media types accepted, a JSON body, a protocol version it supports) and the SDK's
 * schemas for a JSON-RPC request (no other member) and for the call's params; undefined for anything else,
 * and for what the SDK alone acts on: a progress token, a task (`params.task`, a related task in `_meta`).
 */
export function directCallOf(req: IncomingMessage, body: unknown): DirectCall | undefined {
  if (req.method !== 'POST' || !isObject(body) || body['method'] !== 'tools/call' || body['jsonrpc'] !== '2.0') return undefined;
  const { accept, 'content-type': contentType, 'mcp-protocol-version': version } = req.headers;
  // the transport's own test of Accept is these two substrings; the exact type SDK clients send, no other
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream') || contentType !== 'application/json') return undefined;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return undefined;
  const { id, params } = body;
  if (!(typeof id === 'string' || Number.isSafeInteger(id)) || !isObject(params) || !only(body, ENVELOPE_KEYS) || !only(params, PARAMS_KEYS)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return undefined;
  if (meta !== undefined && (!isObject(meta) || 'progressToken' in meta || RELATED_TASK_META_KEY in meta)) return undefined;
  return { id: id as RequestId, name, args: args ?? {} };
}

/** Written as the SDK's transport writes one answer: the protocol's envelope, its headers. */
export function writeAnswer(res: ServerResponse, id: RequestId, result: CallToolResult, sessionId: string | undefined): void {
  const text = JSON.stringify({ result, jsonrpc: '2.0', id });
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json');
  if (sessionId !== undefined) res.setHeader('mcp-session-id', sessionId);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * A session's direct calls in flight, by request id, each aborted as the SDK's protocol aborts its own
 * handlers: by a `notifications/cancelled` naming it, and when the session closes.
 */
export class DirectCalls {
  private readonly running = new Map<RequestId, AbortController>();

  /**
   * A call's controller, aborted by a cancellation, the session's end, or the client going away: its answer
   * `res` closed before it was written. The answer's own `close` is watched, not the connection's signal: an
   * emitter's listener costs a fraction of an `AbortSignal`'s (bench/README.md).
   */
  start(id: RequestId, res: ServerResponse, connection: AbortSignal): AbortController {
    const controller = new AbortController();
    if (connection.aborted) controller.abort();
    else {
      res.once('close', () => {
        if (!res.writableFinished) controller.abort();
      });
    }
    this.running.set(id, controller);
    return controller;
  }

  /** Forgets a call; a later one with the same id (the SDK's protocol forgets a controller so too) is left alone. */
  finish(id: RequestId, controller: AbortController): void {
    if (this.running.get(id) === controller) this.running.delete(id);
  }

  /**
   * Every message the session's transport took, before the SDK's protocol reads it: a cancellation read as
   * the protocol reads it (its schema; a request id that is not falsy) aborts the direct call it names.
   */
  observe(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled') return;
    const parsed = CancelledNotificationSchema.safeParse(message);
    if (parsed.success && parsed.data.params.requestId) this.running.get(parsed.data.params.requestId)?.abort(parsed.data.params.reason);
  }

  /** The session closed: as the protocol aborts its handlers in flight. */
  abortAll(): void {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function only(object: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in object) if (!keys.has(key)) return false;
  return true;
}
