import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { StartupProblem } from '../plugin-api/errors.js';
import type { YamlSource } from './yaml-source.js';

/** One ajv instance for every schema the core checks; `useDefaults` fills defaults in place. */
const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: true, verbose: true });
const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** The required keys that tell the branches of a oneOf apart, e.g. `token, sha256`. */
function alternativesOf(branches: unknown): string {
  if (!Array.isArray(branches)) return 'see the documentation';
  return branches.flatMap((branch) => (branch as { required?: string[] }).required ?? []).join(', ');
}

/** Splits an ajv instance path (`/auth/tokens/0`) into keys and indexes. */
function segments(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath.slice(1).split('/').map((part) => {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~');
    return /^\d+$/.test(key) ? Number(key) : key;
  });
}

/** `['auth', 'tokens', 0, 'token']` -> `auth.tokens[0].token`, as problems name keys. */
export function dotted(path: readonly (string | number)[]): string {
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}

function describe(error: ErrorObject, path: (string | number)[]): { path: (string | number)[]; message: string } {
  const where = dotted(path);
  const prefix = where ? `${where}: ` : '';
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params['additionalProperty']);
      return { path: [...path, key], message: `${where ? `${where}.` : ''}${key}: unknown key` };
    }
    case 'required':
      return { path, message: `${prefix}missing required key "${String(error.params['missingProperty'])}"` };
    case 'enum':
      return { path, message: `${prefix}must be one of ${(error.params['allowedValues'] as unknown[]).map(String).join(', ')}` };
    default:
      return { path, message: `${prefix}${error.message ?? 'is invalid'}` };
  }
}

/**
 * Validates `value` (which may be a part of `source`, found at `basePath`) against a JSON Schema and returns
 * each problem as `file:line` plus a message naming the key. Defaults of the schema are filled in.
 */
export function schemaProblems(
  schema: object,
  value: unknown,
  source: YamlSource,
  basePath: (string | number)[] = [],
): StartupProblem[] {
  const validate = compile(schema);
  if (validate(value)) return [];
  const seen = new Set<string>();
  const problems: StartupProblem[] = [];
  for (const error of validate.errors ?? []) {
    // oneOf/anyOf report every branch; the branch errors below them are more useful than the summary,
    // except when several branches matched: then the keys that must not be given together are the point.
    if (error.keyword === 'oneOf' && Array.isArray(error.params['passingSchemas'])) {
      const path = [...basePath, ...segments(error.instancePath)];
      problems.push(source.problem(path, `${dotted(path) || '(root)'}: give only one of the alternatives (${alternativesOf(error.schema)})`));
      continue;
    }
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const { path, message } = describe(error, [...basePath, ...segments(error.instancePath)]);
    if (seen.has(message)) continue;
    seen.add(message);
    problems.push(source.problem(path, message));
  }
  return problems;
}
