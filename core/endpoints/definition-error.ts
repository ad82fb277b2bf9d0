import type { StartupProblem } from '../plugin-api/errors.js';

/**
 * A fault of an endpoint definition file, found at compile time (syntax, a forbidden construct) or while
 * rendering (a quoted placeholder in SQL, a body that is not valid YAML). Printed as `file:line: message`.
 */
export class DefinitionError extends Error {
  readonly file: string;
  /** 1-based line in the definition file, when known. */
  readonly line: number | undefined;
  /** The bare message, without file and line. */
  readonly reason: string;
  /** What the author should change. */
  readonly remediation: string | undefined;

  constructor(problem: { file: string; line?: number | undefined; message: string; remediation?: string | undefined }, options?: { cause?: unknown }) {
    const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}`;
    const advice = problem.remediation === undefined ? '' : ` (${problem.remediation})`;
    super(`${where}: ${problem.message}${advice}`, options);
    this.name = 'DefinitionError';
    this.file = problem.file;
    this.line = problem.line;
    this.reason = problem.message;
    this.remediation = problem.remediation;
  }

  /** The startup problem that lists this error among others. */
  toProblem(): StartupProblem {
    const message = this.remediation === undefined ? this.reason : `${this.reason} (${this.remediation})`;
    return { file: this.file, ...(this.line === undefined ? {} : { line: this.line }), message, severity: 'error' };
  }
}
