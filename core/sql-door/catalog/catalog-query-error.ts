/**
 * A catalog statement the mirror refused or could not finish, with PostgreSQL's error fields, so the wire
 * protocol sends it as an ErrorResponse like a server's (`42P01` for an unknown relation, `57014` over the
 * time limit). It never names anything outside the caller's mirror: the mirror holds nothing else.
 */
export class CatalogQueryError extends Error {
  /** SQLSTATE, e.g. `42703`. */
  readonly code: string;
  readonly detail: string | undefined;
  readonly hint: string | undefined;
  /** 1-based character offset in the statement, as PostgreSQL's `position`. */
  readonly position: string | undefined;

  constructor(code: string, message: string, fields: { detail?: string; hint?: string; position?: string; cause?: unknown } = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'CatalogQueryError';
    this.code = code;
    this.detail = fields.detail;
    this.hint = fields.hint;
    this.position = fields.position;
  }
}
