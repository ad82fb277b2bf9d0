import { ForbiddenError, InputError } from './errors.js';

/** Why a statement was refused. Stable machine codes, listed in docs/authorization.md. */
export type DenialCode =
  | 'forbidden'
  | 'unknown_relation'
  | 'unqualified_relation'
  | 'unparseable'
  | 'multiple_statements'
  | 'not_read_only'
  | 'function_not_allowed'
  | 'statement_too_complex';

/** Why the authorizer refused a statement: a code of the error catalog, a reason, and the resource at fault. */
export interface Denial {
  allowed: false;
  code: DenialCode;
  /** A sentence for the caller; names the relation, column or function at fault. */
  reason: string;
  /** The relation, column or function refused, e.g. `sales.customers.email`. */
  resource?: string;
}

/** A denial with its code, reason and, when one is at fault, the resource. */
export function deny(code: DenialCode, reason: string, resource?: string): Denial {
  return resource === undefined ? { allowed: false, code, reason } : { allowed: false, code, reason, resource };
}

/**
 * A statement too long, too deep or with too many terms to parse or walk: refused with a clear answer
 * rather than failing on the parser's or the walk's stack. `why` ends `the statement …`.
 */
export function statementTooComplex(why: string): Denial {
  return deny('statement_too_complex', `the statement ${why}: simplify it or split it into several`);
}

/**
 * The error a route throws for a denial: 403 `forbidden` whatever the rule, the reason as message, the
 * authorizer's code and the resource in `details`; a statement too complex is the caller's 400
 * `statement_too_complex` instead, as no grant would let it run. Nothing has run.
 */
export function denialError(denial: Denial): ForbiddenError | InputError {
  if (denial.code === 'statement_too_complex') return new InputError('statement_too_complex', denial.reason);
  return new ForbiddenError('forbidden', denial.reason, {
    details: denial.resource === undefined ? { denial: denial.code } : { denial: denial.code, resource: denial.resource },
  });
}

/** Whether an authorizer outcome is a denial. */
export function isDenial(value: object): value is Denial {
  return 'allowed' in value && value.allowed === false;
}
