import { ERROR_CATALOG, type ErrorCode, type ErrorEnvelope } from '../plugin-api/error-catalog.js';
import { ServiceError } from '../plugin-api/errors.js';
import type { TaskErrorEnvelope } from '../plugin-api/task-documents.js';
import type { Logger } from 'pino';
import type { Request } from 'restify';
import { CredentialRefusal } from './authentication.js';
import { envelopeOf } from './request-context.js';

/** The standard error body: `{code, message, details}`. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

export interface HttpFailure {
  status: number;
  /** In the envelope the route declared: the task envelope on the Task API, the standard one elsewhere. */
  body: ErrorBody | TaskErrorEnvelope;
  /** What the answer must also carry, e.g. the `WWW-Authenticate` challenge of a refused credential. */
  headers: Record<string, string>;
  /** Whether the failure is ours (5xx): those are logged with their cause, the rest are not. */
  serverSide: boolean;
}

interface Failure {
  status: number;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  /** The error's own top-level facts (ServiceError `body`); the envelope's keys win over them. */
  body?: Record<string, unknown>;
}

/** The codes of restify's own refusals (no route, wrong method, ...), found by their status. */
const RESTIFY_CODES: readonly ErrorCode[] = [
  'invalid_request', 'not_found', 'method_not_allowed', 'not_acceptable', 'request_timeout', 'body_too_large', 'unsupported_media_type',
];
/** restify's words for these repeat the request line: the error catalog's message says enough. */
const CATALOG_WORDS: ReadonlySet<ErrorCode> = new Set(['not_found', 'method_not_allowed']);

/**
 * The one mapping of anything thrown to an HTTP answer, for every route: the status of its code in the
 * error catalog, the body in the envelope the route answers in, no stack trace or internals.
 */
export function toHttpFailure(error: unknown, envelope: ErrorEnvelope): HttpFailure {
  const own = failureOf(error);
  const { status, code, message, details } = envelope === 'task' ? inTaskEnvelope(own) : own;
  const body: ErrorBody | TaskErrorEnvelope = envelope === 'task'
    ? { format: 'service-task-error', formatVersion: 1, code, message, retryable: ERROR_CATALOG[code].retryable }
    : { ...own.body, code, message, details };
  const headers: Record<string, string> = error instanceof CredentialRefusal ? { 'WWW-Authenticate': error.challengeFor(code) } : {};
  return { status, body, headers, serverSide: status >= 500 };
}

/**
 * The failure a request answers with, in the envelope its route declared; one of ours (5xx) is logged with
 * its cause first. Every listener's error path goes through here: restify's routes and the first hook's.
 */
export function requestFailure(req: Request, error: unknown, logger: Logger): HttpFailure {
  const failure = toHttpFailure(error, envelopeOf(req));
  // a client that went away had its statements cancelled (the database's 57014): nothing of the service's failed
  if (failure.serverSide && req.socket.destroyed) logger.info({ reqId: req.id(), code: failure.body.code }, 'request ended: its client went away');
  else if (failure.serverSide) logger.error({ reqId: req.id(), err: error }, 'request failed');
  return failure;
}

function failureOf(error: unknown): Failure {
  if (error instanceof ServiceError) {
    return { status: ERROR_CATALOG[error.code].status, code: error.code, message: error.message, details: error.details ?? {}, body: error.body };
  }
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = RESTIFY_CODES.find((candidate) => ERROR_CATALOG[candidate].status === status) ?? 'invalid_request';
    const message = CATALOG_WORDS.has(code) ? ERROR_CATALOG[code].message : firstLine(error);
    return { status, code, message, details: {} };
  }
  return { status: 500, code: 'internal_error', message: ERROR_CATALOG.internal_error.message, details: {} };
}

/** The Task API's own spelling of a failure of the shared request handling, when the error catalog gives one. */
function inTaskEnvelope(failure: Failure): Failure {
  const spelling = ERROR_CATALOG[failure.code].inTaskEnvelope;
  if (!spelling) return failure;
  const { status, message } = ERROR_CATALOG[spelling.code];
  return { status, code: spelling.code, message: spelling.keepMessage ? failure.message : message, details: failure.details };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : '').split('\n')[0] ?? '';
}
