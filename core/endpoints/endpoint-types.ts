/** Vocabulary of definition bodies (docs/endpoints.md). */
export const FILTER_OPERATIONS = [
  'EQUAL', 'NOT_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL',
  'IN', 'NOT_IN', 'LIKE', 'IS_NULL', 'IS_NOT_NULL',
] as const;
export type FilterOperation = (typeof FILTER_OPERATIONS)[number];

export const OPERATION_TYPES = ['insert', 'update', 'delete'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export const DATA_TYPES = ['json', 'string', 'integer', 'decimal', 'boolean', 'date', 'timestamp', 'uuid'] as const;
export type DataType = (typeof DATA_TYPES)[number];

/*
 * Bodies as written, after rendering: scalars may still be placeholder tokens (see bound-text.ts), which
 * the engines resolve to the request's values with `scalarValue`.
 */

export interface VdbReference {
  virtualDatabase?: string;
  virtualDatabaseVersion?: string | number;
}

export interface QueryBody extends VdbReference {
  type: 'sqlDirect';
  description?: string;
  virtualDatabase: string;
  neededFields?: string[];
  query: string;
}

export interface FilterBody {
  field: string;
  operation: FilterOperation;
  value?: unknown;
}

export interface ValueAssignmentBody {
  field: string;
  value: unknown;
  dataType?: DataType;
}

export interface AssertionBody extends VdbReference {
  name: string;
  entity: string;
  filters?: FilterBody[];
  assertThat: 'exists' | 'does_not_exist';
  message: string;
}

export interface WaitBody {
  maxSeconds: number;
  checkEverySeconds: number;
  byGetting: {
    fields: string[];
    usingFilterFieldValuePairs?: Record<string, unknown>;
    usingFilterFields?: string[];
    putInContextVar?: string;
  };
}

export interface RollbackBody {
  type: OperationType;
  entity?: string;
  filters?: FilterBody[];
  valueAssignments?: ValueAssignmentBody[];
}

export interface OperationBody extends VdbReference {
  name: string;
  type: OperationType;
  entity: string;
  skipWhenTrue?: unknown;
  valueAssignments?: ValueAssignmentBody[];
  filters?: FilterBody[];
  waitUntilEffective?: WaitBody;
  rollback?: RollbackBody;
}

export interface ActionBody extends VdbReference {
  description?: string;
  needed?: { fields?: string[] };
  before?: AssertionBody[];
  operations: OperationBody[];
}
