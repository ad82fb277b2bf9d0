import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { LOGICAL_TYPES, type LogicalType } from '../plugin-api/catalog.js';
import { dotted } from '../config/schema-validation.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';

/** Names used inside SQL expressions (`dataset.field`) must be plain SQL identifiers. */
const identifier = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } as const;

export const manifestSchema = {
  $id: 'https://vdb-service.dev/schemas/semantic-manifest.json',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'version', 'namespace', 'documents'],
  properties: {
    name: { type: 'string', minLength: 1 },
    version: { type: 'string', minLength: 1 },
    namespace: identifier,
    description: { type: 'string' },
    defaultSchema: { type: 'string', minLength: 1 },
    documents: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'mediaType', 'sha256'],
        properties: {
          // Relative, inside the module: no leading slash, no `..`, no backslash.
          path: { type: 'string', pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$))[^\\\\]+$' },
          mediaType: { type: 'string', minLength: 1 },
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        },
      },
    },
  },
} as const;

export interface ModuleManifest {
  name: string;
  version: string;
  namespace: string;
  description?: string;
  /** The schema of sources that name none, unless the VDB file sets `semantic.defaultSchema`. */
  defaultSchema?: string;
  documents: { path: string; mediaType: string; sha256: string }[];
}

/**
 * A dataset's declared role. The Foundation recognises a bridge from its relationships alone (§6.8.1);
 * declaring it makes the intent checkable: a declared bridge must have many-to-one relationships to two
 * or more other datasets.
 */
export const DATASET_ROLES = ['bridge'] as const;
export type DatasetRole = (typeof DATASET_ROLES)[number];

const aiContext = { type: ['string', 'object', 'array'] } as const;
const customExtensions = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['vendor_name', 'data'],
    properties: { vendor_name: { type: 'string', minLength: 1 }, data: { type: 'string' } },
  },
} as const;
/**
 * Expression dialects: OSI 1.0's, the Foundation schema's additions (DAX, MAQL, BIGQUERY), and the
 * Foundation expression language's own dialect, which it spells `Ossie_SQL_2026` and the OSI issue tracker
 * `OSI_SQL_2026`: both spellings name one dialect (docs/semantic.md).
 */
export const OSI_DIALECTS = ['OSI_SQL_2026', 'Ossie_SQL_2026', 'ANSI_SQL', 'SNOWFLAKE', 'MDX', 'DAX', 'TABLEAU', 'DATABRICKS', 'MAQL', 'BIGQUERY'] as const;
const dialectedExpression = {
  type: 'object',
  additionalProperties: false,
  required: ['dialects'],
  properties: {
    dialects: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['expression'],
        properties: {
          dialect: { enum: OSI_DIALECTS },
          expression: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;
/** A plain string (the Foundation's form) or OSI 1.0's object with one entry per dialect. */
const expression = { if: { type: 'object' }, then: dialectedExpression, else: { type: 'string', minLength: 1 } } as const;
const accessModifier = { enum: ['public', 'private'] } as const;
/** The Foundation's portable data types (osi-schema.json `DataType`). */
export const OSI_DATATYPES = ['String', 'Integer', 'Decimal', 'Float', 'Boolean', 'Date', 'Time', 'DateTime', 'DateTimeTz', 'Opaque'] as const;
export type OsiDatatype = (typeof OSI_DATATYPES)[number];
const columnList = { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } as const;

/**
 * OSI 1.0, Apache Ossie 0.1.0 to 0.2.0.dev0 and the OSI Foundation's model document (docs/semantic.md) with the service's additions:
 * top-level `namespace`, `imports` and `binding`, `logical_type` on a field, `role` on a dataset. Strict:
 * an unknown key is an error, so a typo is not ignored (keys the Foundation defers get their own code).
 */
export const osiDocumentSchema = {
  $id: 'https://vdb-service.dev/schemas/osi-document.json',
  type: 'object',
  additionalProperties: false,
  required: ['semantic_model'],
  properties: {
    version: { type: 'string', minLength: 1 },
    // Ossie 0.1.1's enumerations of the dialects and vendors a document uses: read, not needed.
    dialects: { type: 'array', items: { enum: OSI_DIALECTS } },
    vendors: { type: 'array', items: { type: 'string' } },
    namespace: identifier,
    imports: { type: 'array', uniqueItems: true, items: identifier },
    binding: {
      type: 'object',
      additionalProperties: false,
      required: ['schema'],
      properties: { schema: { type: 'string', minLength: 1 } },
    },
    semantic_model: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'datasets'],
        properties: {
          name: { type: 'string', minLength: 1 },
          description: { type: 'string' },
          dialect: { enum: OSI_DIALECTS },
          ai_context: aiContext,
          custom_extensions: customExtensions,
          datasets: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'source'],
              properties: {
                name: identifier,
                source: { type: 'string', minLength: 1 },
                primary_key: columnList,
                unique_keys: { type: 'array', items: columnList },
                role: { enum: DATASET_ROLES },
                description: { type: 'string' },
                ai_context: aiContext,
                custom_extensions: customExtensions,
                fields: {
                  type: 'array',
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['name', 'expression'],
                    properties: {
                      name: identifier,
                      expression,
                      dimension: { type: 'object', additionalProperties: false, properties: { is_time: { type: 'boolean' } } },
                      label: { type: 'string' },
                      description: { type: 'string' },
                      datatype: { enum: OSI_DATATYPES },
                      access_modifier: accessModifier,
                      ai_context: aiContext,
                      custom_extensions: customExtensions,
                      logical_type: { enum: LOGICAL_TYPES },
                    },
                  },
                },
              },
            },
          },
          relationships: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'from', 'to', 'from_columns', 'to_columns'],
              properties: {
                name: identifier,
                from: { type: 'string', minLength: 1 },
                to: { type: 'string', minLength: 1 },
                from_columns: columnList,
                to_columns: columnList,
                description: { type: 'string' },
                ai_context: aiContext,
                custom_extensions: customExtensions,
              },
            },
          },
          metrics: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'expression'],
              properties: {
                name: identifier,
                expression,
                description: { type: 'string' },
                datatype: { enum: OSI_DATATYPES },
                access_modifier: accessModifier,
                ai_context: aiContext,
                custom_extensions: customExtensions,
              },
            },
          },
        },
      },
    },
  },
} as const;

/** OSI 1.0's per-dialect form; an entry without `dialect` is in the model's dialect, else ANSI_SQL. */
export interface OsiDialectedExpression {
  dialects: { dialect?: OsiDialect; expression: string }[];
}

export type OsiDialect = (typeof OSI_DIALECTS)[number];
export type OsiExpression = string | OsiDialectedExpression;
export type AccessModifier = 'public' | 'private';

export interface OsiField {
  name: string;
  expression: OsiExpression;
  dimension?: { is_time?: boolean };
  label?: string;
  description?: string;
  datatype?: OsiDatatype;
  access_modifier?: AccessModifier;
  ai_context?: JsonValue;
  logical_type?: LogicalType;
}

export interface OsiDataset {
  name: string;
  source: string;
  primary_key?: string[];
  unique_keys?: string[][];
  role?: DatasetRole;
  description?: string;
  ai_context?: JsonValue;
  fields?: OsiField[];
}

export interface OsiRelationship {
  name: string;
  from: string;
  to: string;
  from_columns: string[];
  to_columns: string[];
  description?: string;
  ai_context?: JsonValue;
}

export interface OsiMetric {
  name: string;
  expression: OsiExpression;
  description?: string;
  datatype?: OsiDatatype;
  access_modifier?: AccessModifier;
  ai_context?: JsonValue;
}

export interface OsiModel {
  name: string;
  description?: string;
  dialect?: OsiDialect;
  ai_context?: JsonValue;
  datasets: OsiDataset[];
  relationships?: OsiRelationship[];
  metrics?: OsiMetric[];
}

export interface OsiDocument {
  version?: string;
  namespace?: string;
  imports?: string[];
  binding?: { schema: string };
  semantic_model: OsiModel[];
}

/** One schema violation, with the path of the offending value for its location. */
export interface ShapeProblem {
  path: (string | number)[];
  message: string;
  /** Set when the violation is a key the schema does not know: the key. */
  unknownKey?: string;
}

/**
 * Keys the OSI Foundation recognises but defers (foundational_semantics.md §3, §4.4, §4.5, §6.9, Appendix A
 * `E_DEFERRED_KEY_REJECTED`): declared referential integrity, join conditions, grain and filter contexts,
 * path hints. They are refused with their own code, not as typos.
 */
const DEFERRED_KEYS: ReadonlySet<string> = new Set([
  'referential_integrity', 'from_all_rows_match', 'to_all_rows_match', 'condition', 'asof', 'range', 'grain',
  'filter', 'natural_grain', 'using_relationships', 'joins',
]);

/** Whether an unknown key at `path` is one the Foundation defers; `metrics` inside a dataset is (§4.5). */
export function isDeferredKey(problem: ShapeProblem): boolean {
  const key = problem.unknownKey;
  if (key === undefined) return false;
  return DEFERRED_KEYS.has(key) || (key === 'metrics' && problem.path.at(-3) === 'datasets');
}

const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true });
const validators = new Map<object, ValidateFunction>();

/** Validates `value`; returns the problems, empty when it fits. */
export function shapeProblems(schema: object, value: unknown): ShapeProblem[] {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  if (validate(value)) return [];
  // An `if` failure only says its `then` or `else` failed; the errors of that branch say where and why.
  return (validate.errors ?? []).filter((error) => error.keyword !== 'if').map(describe);
}

function describe(error: ErrorObject): ShapeProblem {
  const path = error.instancePath === ''
    ? []
    : error.instancePath.slice(1).split('/').map((part) => (/^\d+$/.test(part) ? Number(part) : part.replaceAll('~1', '/').replaceAll('~0', '~')));
  const where = dotted(path) || '(document)';
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params['additionalProperty']);
      return { path: [...path, key], message: `${where}: unknown key "${key}"`, unknownKey: key };
    }
    case 'required':
      return { path, message: `${where}: missing required key "${String(error.params['missingProperty'])}"` };
    case 'enum':
      return { path, message: `${where}: must be one of ${(error.params['allowedValues'] as unknown[]).map(String).join(', ')}` };
    case 'pattern':
      return { path, message: `${where}: ${JSON.stringify(error.data)} does not match ${String(error.params['pattern'])}` };
    default:
      return { path, message: `${where}: ${error.message ?? 'is invalid'}` };
  }
}
