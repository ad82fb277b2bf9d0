import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { dotted } from '../config/schema-validation.js';
import { DATA_TYPES, FILTER_OPERATIONS, OPERATION_TYPES } from './endpoint-types.js';

/*
 * JSON Schemas of rendered definition bodies (docs/endpoints.md). A rendered body still holds placeholder tokens
 * `⟦n⟧` where request values go: names (entities, fields, operations, VDBs) must be literal text, so that no
 * request value can choose what is read or written; values may be anything.
 */
const LITERAL = '^[^⟦⟧]+$';
const name = { type: 'string', minLength: 1, pattern: LITERAL };
const version = { type: ['string', 'number'], pattern: LITERAL };
const fieldNames = { type: 'array', items: name, uniqueItems: true };
const identifierName = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };
/** Step names label the response; they may hold values (e.g. `insert_line_{{ loop.index }}`). */
const label = { type: 'string', minLength: 1 };

const filter = {
  type: 'object',
  required: ['field', 'operation'],
  additionalProperties: false,
  properties: { field: name, operation: { enum: FILTER_OPERATIONS }, value: {} },
};
const filters = { type: 'array', items: filter };
const valueAssignment = {
  type: 'object',
  required: ['field', 'value'],
  additionalProperties: false,
  properties: { field: name, value: {}, dataType: { enum: DATA_TYPES } },
};
const valueAssignments = { type: 'array', items: valueAssignment };

/** insert needs values, update values and filters, delete filters: an unfiltered write is refused. */
const writeShape = [
  { if: { properties: { type: { const: 'insert' } } }, then: { required: ['valueAssignments'], properties: { valueAssignments: { minItems: 1 } } } },
  { if: { properties: { type: { const: 'update' } } }, then: { required: ['valueAssignments', 'filters'], properties: { valueAssignments: { minItems: 1 }, filters: { minItems: 1 } } } },
  { if: { properties: { type: { const: 'delete' } } }, then: { required: ['filters'], properties: { filters: { minItems: 1 } } } },
];

const waitUntilEffective = {
  type: 'object',
  required: ['maxSeconds', 'checkEverySeconds', 'byGetting'],
  additionalProperties: false,
  properties: {
    maxSeconds: { type: 'integer', minimum: 1, maximum: 3600 },
    checkEverySeconds: { type: 'integer', minimum: 1, maximum: 3600 },
    byGetting: {
      type: 'object',
      required: ['fields'],
      additionalProperties: false,
      properties: {
        fields: { ...fieldNames, minItems: 1 },
        usingFilterFieldValuePairs: { type: 'object', minProperties: 1, propertyNames: { pattern: LITERAL } },
        usingFilterFields: { ...fieldNames, minItems: 1 },
        putInContextVar: identifierName,
      },
      oneOf: [{ required: ['usingFilterFieldValuePairs'] }, { required: ['usingFilterFields'] }],
    },
  },
};

const rollback = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: { type: { enum: OPERATION_TYPES }, entity: name, filters, valueAssignments },
  allOf: writeShape,
};

const operation = {
  type: 'object',
  required: ['name', 'type', 'entity'],
  additionalProperties: false,
  properties: {
    name: label,
    type: { enum: OPERATION_TYPES },
    virtualDatabase: name,
    virtualDatabaseVersion: version,
    entity: name,
    skipWhenTrue: { type: ['boolean', 'string', 'null'] },
    valueAssignments,
    filters,
    waitUntilEffective,
    rollback,
  },
  allOf: writeShape,
};

const assertion = {
  type: 'object',
  required: ['name', 'entity', 'assertThat', 'message'],
  additionalProperties: false,
  properties: {
    name: label,
    virtualDatabase: name,
    virtualDatabaseVersion: version,
    entity: name,
    filters,
    assertThat: { enum: ['exists', 'does_not_exist'] },
    message: { type: 'string', minLength: 1 },
  },
};

export const QUERY_BODY_SCHEMA = {
  type: 'object',
  required: ['type', 'virtualDatabase', 'query'],
  additionalProperties: false,
  properties: {
    type: { const: 'sqlDirect' },
    description: { type: 'string' },
    virtualDatabase: name,
    virtualDatabaseVersion: version,
    neededFields: fieldNames,
    query: { type: 'string' },
  },
};

export const ACTION_BODY_SCHEMA = {
  type: 'object',
  required: ['operations'],
  additionalProperties: false,
  properties: {
    description: { type: 'string' },
    virtualDatabase: name,
    virtualDatabaseVersion: version,
    needed: { type: 'object', additionalProperties: false, properties: { fields: fieldNames } },
    before: { type: 'array', items: assertion },
    operations: { type: 'array', minItems: 1, items: operation },
  },
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validators = new Map<object, ValidateFunction>();
/** Renders of the same shape share one frozen document: each is checked once. */
const verdicts = new WeakMap<object, string[]>();

/** The problems of a rendered body against its schema, as `path: message`; empty when it is valid. */
export function bodyProblems(schema: object, document: unknown): string[] {
  if (document === null || typeof document !== 'object') return ['the body must be a YAML mapping'];
  const known = verdicts.get(document);
  if (known) return known;
  const problems = bodyProblemsAt(schema, document).map((problem) => problem.message);
  verdicts.set(document, problems);
  return problems;
}

/** A problem of a rendered body and the path of the part at fault, so startup can name its file line. */
export interface BodyProblem {
  message: string;
  path: (string | number)[];
}

/** The problems of a rendered body with their paths (startup checks; requests use the cached `bodyProblems`). */
export function bodyProblemsAt(schema: object, document: unknown): BodyProblem[] {
  if (document === null || typeof document !== 'object') return [{ message: 'the body must be a YAML mapping', path: [] }];
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  return validate(document) ? [] : describeErrors(validate.errors ?? []);
}

function describeErrors(errors: readonly ErrorObject[]): BodyProblem[] {
  // `if`/`then` and `oneOf` repeat what their branches said; keep the specific messages
  const seen = new Set<string>();
  return errors.filter((error) => error.keyword !== 'if').map(describe).filter((problem) => !seen.has(problem.message) && seen.add(problem.message));
}

function describe(error: ErrorObject): BodyProblem {
  const path = error.instancePath.slice(1).split('/').filter((part) => part !== '').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const where = path.length === 0 ? 'body' : dotted(path);
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params['additionalProperty']);
      return { message: `${where}: unknown key "${key}"`, path: [...path, key] };
    }
    case 'required':
      return { message: `${where}: missing "${String(error.params['missingProperty'])}"`, path };
    case 'enum':
      return { message: `${where}: must be one of ${(error.params['allowedValues'] as unknown[]).map(String).join(', ')}`, path };
    case 'oneOf':
      return { message: `${where}: give exactly one of usingFilterFieldValuePairs, usingFilterFields`, path };
    case 'pattern':
      return {
        message: error.params['pattern'] === LITERAL
          ? `${where}: must be written literally in the definition, not come from a request value`
          : `${where}: must be a plain name (letters, digits, _)`,
        path,
      };
    default:
      return { message: `${where}: ${error.message ?? 'is invalid'}`, path };
  }
}
