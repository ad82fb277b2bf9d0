import {
  AuthenticationError, ConflictError, DeadlineError, ForbiddenError, InputError, NotFoundError,
  PayloadTooLargeError, ServiceError, UnavailableError, UnsupportedMediaTypeError, UpstreamError,
} from '../plugin-api/errors.js';

/** The JSON body of every error response of the service's own routes. */
export interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface HttpFailure {
  status: number;
  body: ErrorBody;
  /** Whether the failure is ours (5xx): those are logged with their cause, the rest are not. */
  serverSide: boolean;
}

const STATUS_BY_CLASS: [new (...args: never[]) => ServiceError, number][] = [
  [InputError, 400],
  [AuthenticationError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [PayloadTooLargeError, 413],
  [UnsupportedMediaTypeError, 415],
  [UpstreamError, 502],
  [UnavailableError, 503],
  [DeadlineError, 504],
];

/** restify's own errors (no route, wrong method, body over the limit) mapped to the service's codes. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request', 404: 'not_found', 405: 'method_not_allowed', 406: 'not_acceptable',
  413: 'body_too_large', 415: 'unsupported_media_type', 408: 'request_timeout',
};

/** Maps anything thrown to a status and a body without stack traces or internals. */
export function toHttpFailure(error: unknown): HttpFailure {
  if (error instanceof ServiceError) {
    const status = STATUS_BY_CLASS.find(([type]) => error instanceof type)?.[1] ?? 500;
    return { status, body: { code: error.code, message: error.message, details: error.details ?? {} }, serverSide: status >= 500 };
  }
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_BY_STATUS[status] ?? 'invalid_request';
    return { status, body: { code, message: publicMessage(error, status), details: {} }, serverSide: false };
  }
  return { status: 500, body: { code: 'internal_error', message: 'internal error', details: {} }, serverSide: true };
}

function publicMessage(error: unknown, status: number): string {
  if (status === 404) return 'no such route';
  if (status === 405) return 'method not allowed on this route';
  const message = error instanceof Error ? error.message : '';
  return message.split('\n')[0] ?? '';
}
