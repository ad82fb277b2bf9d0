import type { Datasource, QueryOptions } from '../plugin-api/sql-dialect.js';
import { statementFailure } from './statement-failure.js';

/** How a statement ended, as the metrics count it (docs/observability.md). */
export const STATEMENT_OUTCOMES = ['ok', 'denied', 'timeout', 'cancelled', 'failed'] as const;
export type StatementOutcome = (typeof STATEMENT_OUTCOMES)[number];

/**
 * Told about the statements of one service, so that the metrics of each service count its own: tests run
 * several services in one process over one shared datasource.
 */
export interface StatementObserver {
  /** A datasource the service opened or was handed, by its name in the config; its pool is read when the metrics are. */
  opened(name: string, datasource: Datasource): void;
  /** One statement; `seconds` is how long the database took, absent for a denial, which never reached it. */
  statement(datasource: string, outcome: StatementOutcome, seconds?: number): void;
  /** Rows one pushed statement of a federated plan read from the datasource. */
  sourceRows(datasource: string, rows: number): void;
  /** A federated plan ended: answered (`ok`), refused or failed (the outcome of its failure). */
  federatedPlan(outcome: StatementOutcome): void;
  /** A federated plan was answered by the datasource, the other sources' rows sent to it (docs/federation.md#shipping-the-small-side). */
  shippedPlan(datasource: string): void;
}

/**
 * The outcome of a statement that failed: `cancelled` when the request or task it ran for ended (its signal
 * aborted) or the server cancelled it unasked, `timeout` when it outran its own time limit, `denied` when the
 * database refused it as the caller's role, else `failed`.
 */
export function failureOutcome(error: unknown, options: QueryOptions | undefined): StatementOutcome {
  if (options?.signal?.aborted) return 'cancelled';
  const { kind } = statementFailure(error);
  if (kind === 'denied') return 'denied';
  if (kind !== 'timeout') return 'failed';
  return options?.timeoutMs === undefined ? 'cancelled' : 'timeout';
}
