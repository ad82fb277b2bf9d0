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
  documents: { path: string; mediaType: string; sha256: string }[];
}

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
const expression = {
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
          dialect: { enum: ['ANSI_SQL', 'SNOWFLAKE', 'MDX', 'TABLEAU', 'DATABRICKS'], default: 'ANSI_SQL' },
          expression: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;
const columnList = { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } as const;

/**
 * OSI 1.0 (docs/semantic.md) with the service's additions: top-level `namespace`, `imports` and
 * `binding`, and `logical_type` on a field. Strict: an unknown key is an error, so a typo is not ignored.
 */
export const osiDocumentSchema = {
  $id: 'https://vdb-service.dev/schemas/osi-document.json',
  type: 'object',
  additionalProperties: false,
  required: ['semantic_model'],
  properties: {
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

export interface OsiExpression {
  dialects: { dialect: string; expression: string }[];
}

export interface OsiField {
  name: string;
  expression: OsiExpression;
  dimension?: { is_time?: boolean };
  label?: string;
  description?: string;
  ai_context?: JsonValue;
  logical_type?: LogicalType;
}

export interface OsiDataset {
  name: string;
  source: string;
  primary_key?: string[];
  unique_keys?: string[][];
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
  ai_context?: JsonValue;
}

export interface OsiMetric {
  name: string;
  expression: OsiExpression;
  description?: string;
  ai_context?: JsonValue;
}

export interface OsiModel {
  name: string;
  description?: string;
  ai_context?: JsonValue;
  datasets: OsiDataset[];
  relationships?: OsiRelationship[];
  metrics?: OsiMetric[];
}

export interface OsiDocument {
  namespace?: string;
  imports?: string[];
  binding?: { schema: string };
  semantic_model: OsiModel[];
}

/** One schema violation, with the path of the offending value for its location. */
export interface ShapeProblem {
  path: (string | number)[];
  message: string;
}

// useDefaults fills `dialect: ANSI_SQL` where a document leaves it out, as OSI says.
const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: true, verbose: true });
const validators = new Map<object, ValidateFunction>();

/** Validates (and fills defaults into) `value`; returns the problems, empty when it fits. */
export function shapeProblems(schema: object, value: unknown): ShapeProblem[] {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map(describe);
}

function describe(error: ErrorObject): ShapeProblem {
  const path = error.instancePath === ''
    ? []
    : error.instancePath.slice(1).split('/').map((part) => (/^\d+$/.test(part) ? Number(part) : part.replaceAll('~1', '/').replaceAll('~0', '~')));
  const where = dotted(path) || '(document)';
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params['additionalProperty']);
      return { path: [...path, key], message: `${where}: unknown key "${key}"` };
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
