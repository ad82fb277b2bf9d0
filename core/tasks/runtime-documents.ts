/**
 * Validation of the four runtime documents against their published JSON Schemas (docs/runtime/).
 * The schemas are the contract both sides check, so they are read from the files a runtime author
 * reads rather than restated here.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

export const RUNTIME_DOCUMENT_KINDS = ['service-task-start', 'service-task-advance', 'service-task-snapshot', 'service-task-error'] as const;
export type RuntimeDocumentKind = (typeof RUNTIME_DOCUMENT_KINDS)[number];

// No useDefaults: validating must not change the document (a TaskSnapshot must not gain `pendingActions`).
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true });

// dist/core/tasks -> the project root, where docs/ ships beside dist/.
const validators = Object.fromEntries(RUNTIME_DOCUMENT_KINDS.map((kind) => {
  const file = new URL(`../../../docs/runtime/${kind}.schema.json`, import.meta.url);
  return [kind, ajv.compile(JSON.parse(readFileSync(file, 'utf8')) as object)];
})) as Record<RuntimeDocumentKind, ValidateFunction>;

/** `/observations/0/error` -> `observations[0].error`; the root is `(root)`. */
function pathOf(instancePath: string, key?: string): string {
  const parts = instancePath === '' ? [] : instancePath.slice(1).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (key !== undefined) parts.push(key);
  const path = parts.reduce((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
  return path || '(root)';
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${pathOf(error.instancePath, String(params['missingProperty']))}: is required`;
    case 'additionalProperties':
      return `${pathOf(error.instancePath, String(params['additionalProperty']))}: is not allowed`;
    case 'enum':
      return `${pathOf(error.instancePath)}: must be one of ${(params['allowedValues'] as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `${pathOf(error.instancePath)}: must be ${JSON.stringify(params['allowedValue'])}`;
    case 'pattern': {
      // A title names the pattern for people (`Base64 ...`); the regex itself is the fallback.
      const title = (error.parentSchema as { title?: string } | undefined)?.title;
      return `${pathOf(error.instancePath)}: must be ${title ?? `a match of ${String(params['pattern'])}`}`;
    }
    default:
      return `${pathOf(error.instancePath)}: ${error.message ?? 'is invalid'}`;
  }
}

/**
 * Checks a runtime document against its schema. Returns nothing when valid, else one short
 * `path: message` per problem, e.g. `task.taskId: is required` or `state: must be one of working, ...`.
 */
export function validateRuntimeDocument(kind: RuntimeDocumentKind, value: unknown): string[] {
  const validate = validators[kind];
  if (validate(value)) return [];
  // `if` only reports that its `then` failed; the error below it names the field.
  return [...new Set((validate.errors ?? []).filter((error) => error.keyword !== 'if').map(describe))];
}
