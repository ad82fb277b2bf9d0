/**
 * Tells a statement too deep or with too many terms from one that does not parse. The parsers and the walks
 * over their trees recurse, so size shows as a RangeError (the JavaScript stack, or JSON.parse of a deep
 * tree) or as libpg-query's own limits; either is the caller's 400 `statement_too_complex`, never a 500.
 */
import { statementTooComplex, type Denial } from '../plugin-api/denial.js';
import { messageOf } from '../plugin-api/errors.js';

/** libpg-query's words when its parser stack fills up (`memory exhausted at or near "("`). */
const PARSER_LIMIT_MESSAGE = /stack depth limit exceeded|memory exhausted/i;

/** The denial of a parse that failed on the statement's size, or undefined when it failed on its syntax. */
export function parserLimitDenial(error: unknown): Denial | undefined {
  if (!(error instanceof RangeError) && !PARSER_LIMIT_MESSAGE.test(messageOf(error))) return undefined;
  return statementTooComplex(`nests too deeply or has too many terms to be parsed (${messageOf(error)})`);
}

/** Runs a walk over a parse tree: a stack overflow there is the statement's size, not a fault of the service. */
export function walkWithinLimits<T>(walk: () => T): T | Denial {
  try {
    return walk();
  } catch (error) {
    if (error instanceof RangeError) return statementTooComplex('nests too deeply or has too many terms to be authorized');
    throw error;
  }
}
