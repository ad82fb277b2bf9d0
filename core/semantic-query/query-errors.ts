/**
 * Refusals of a semantic query: 400 `semantic_query_invalid` with the OSI Foundation's error code
 * (`details.osiCode`, its Appendix A) and the part of the query at fault (`details.target`).
 */
import { InputError } from '../plugin-api/errors.js';

/** The Foundation's codes the compiler raises, and the service's own for what the Foundation has none for. */
export type OsiCode =
  | 'E_NAME_NOT_FOUND' | 'E_NAME_COLLISION' | 'E_EMPTY_AGGREGATION_QUERY' | 'E_MIXED_QUERY_SHAPE'
  | 'E_NO_PATH' | 'E_AMBIGUOUS_PATH' | 'E3012_MN_NO_SAFE_REWRITE' | 'E3013_NO_STITCHING_DIMENSION'
  | 'E_AGGREGATE_IN_WHERE' | 'E_WINDOW_IN_WHERE' | 'E_NON_AGGREGATE_IN_HAVING' | 'E_MIXED_PREDICATE_LEVEL'
  | 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE' | 'E_NESTED_AGGREGATION_DEFERRED' | 'E_DEFERRED_FRAME_MODE'
  | 'E_EMPTY_SCALAR_QUERY' | 'E_AGGREGATE_IN_SCALAR_QUERY' | 'E_FAN_OUT_IN_SCALAR_QUERY' | 'E_WINDOW_OVER_FANOUT_REWRITE'
  | 'E_WINDOWED_METRIC_COMPOSITION' | 'E_NESTED_WINDOW' | 'E_AMBIGUOUS_MEASURE_GRAIN'
  /** Service codes: a query or expression outside the accepted syntax, a function off the allow-list. */
  | 'E_INVALID_QUERY' | 'E_INVALID_EXPRESSION' | 'E_FUNCTION_NOT_ALLOWED';

export function queryInvalid(osiCode: OsiCode, target: string, message: string): InputError {
  return new InputError('semantic_query_invalid', message, { details: { osiCode, target } });
}
