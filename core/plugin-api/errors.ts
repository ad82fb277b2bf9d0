import { ERROR_CATALOG, type CodeOfStatus, type ErrorCode, type ErrorStatus } from './error-catalog.js';

/**
 * Domain errors. None of them knows about HTTP: the edge (core/server/http-errors.ts) answers each with the
 * status its code has in the error catalog. Every error carries a stable machine `code` from that catalog.
 */
export interface ErrorOptions {
  /** Extra machine-readable facts for the caller, e.g. `{ missing: ['customerId'] }`. */
  details?: Record<string, unknown>;
  /**
   * Facts the answer carries at its top level, beside `code`, `message` and `details`: for a route whose
   * specification fixes its error body (the admin package route's 409 is the VDB detail).
   */
  body?: Record<string, unknown>;
  /** The lower-level error, kept for logs; never shown to a caller. */
  cause?: unknown;
}

/** A domain error with a code of the error catalog; the HTTP edge answers it with the status of its code. */
export abstract class ServiceError extends Error {
  readonly details: Record<string, unknown> | undefined;
  readonly body: Record<string, unknown> | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CATALOG[code].message,
    options: ErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.details = options.details;
    this.body = options.body;
  }
}

/** The errors of one status: the constructor takes only the error catalog's codes of that status. */
function category<S extends ErrorStatus>() {
  return class extends ServiceError {
    declare readonly code: CodeOfStatus<S>;
    constructor(code: CodeOfStatus<S>, message?: string, options?: ErrorOptions) {
      super(code, message, options);
    }
  };
}

/** The request is malformed or names something invalid (400). */
export class InputError extends category<400>() {}
/** No effective authenticated caller (401). */
export class AuthenticationError extends category<401>() {}
/** The caller is known but not allowed (403). */
export class ForbiddenError extends category<403>() {}
/** The named thing does not exist (404). */
export class NotFoundError extends category<404>() {}
/** The request conflicts with the current state (409). */
export class ConflictError extends category<409>() {}
/** The request body exceeds a configured limit (413). */
export class PayloadTooLargeError extends category<413>() {}
/** The request body has a media type the route does not read (415). */
export class UnsupportedMediaTypeError extends category<415>() {}
/** The request is valid but what it asks for exceeds a limit of the service (422). */
export class LimitError extends category<422>() {}
/** A dependency (datasource, runtime) is down or the service is not ready (503). */
export class UnavailableError extends category<503>() {}
/** A dependency answered wrongly (502). */
export class UpstreamError extends category<502>() {}
/** A dependency did not answer in time (504). */
export class DeadlineError extends category<504>() {}
/** Anything else that failed on our side (500). */
export class InternalError extends category<500>() {}

/**
 * A startup problem: bad config, bad plugin, bad descriptor. Printed as one line
 * `file:line: message` (or `plugin <name>: reason`) and the process exits non-zero.
 */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly problems: StartupProblem[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartupError';
  }

  /** One error listing every problem, a line each. */
  static of(problems: StartupProblem[]): StartupError {
    return new StartupError(problems.map(formatProblem).join('\n'), problems);
  }
}

/** One problem found at startup, with the file and line at fault. */
export interface StartupProblem {
  /** The file at fault, relative to the working directory where possible. */
  file: string;
  /** 1-based line in that file, when known. */
  line?: number;
  message: string;
  severity?: 'error' | 'warning';
}

export function formatProblem(problem: StartupProblem): string {
  return `${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.message}`;
}

/** The message of anything thrown, without its stack. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
