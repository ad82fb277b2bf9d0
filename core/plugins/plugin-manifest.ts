import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';

export const PLUGIN_KINDS = [
  'sqlDialect', 'templateEngine', 'templateFunctions', 'semanticProvider', 'runtimeTransport', 'authScheme',
] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** The contents of a plugin's `plugin.json`; its JSON Schema is `plugin.schema.json` at the project root. */
export interface PluginManifest {
  name: string;
  version: string;
  kind: PluginKind;
  id: string;
  /** Module relative to the manifest whose default export registers the plugin. */
  entry: string;
  description: string;
  coreVersion?: string;
  /** JSON Schema of the plugin's own config section. */
  configSchema?: Record<string, unknown>;
}

// dist/core/plugins -> project root
const schemaPath = fileURLToPath(new URL('../../../plugin.schema.json', import.meta.url));
const manifestSchema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateManifestShape = ajv.compile<PluginManifest>(manifestSchema);

/** Returns the problems of a parsed manifest, each as `path: message`; empty when it is valid. */
export function manifestProblems(manifest: unknown): string[] {
  if (validateManifestShape(manifest)) {
    const schema = manifest.configSchema;
    if (schema !== undefined && !ajv.validateSchema(schema)) return [`configSchema: ${ajv.errorsText(ajv.errors)}`];
    return [];
  }
  return (validateManifestShape.errors ?? []).map(describeAjvError);
}

export function describeAjvError(error: ErrorObject): string {
  const where = error.instancePath === '' ? '(root)' : error.instancePath.slice(1).replaceAll('/', '.');
  if (error.keyword === 'additionalProperties') {
    return `${where}: unknown key "${String(error.params['additionalProperty'])}"`;
  }
  if (error.keyword === 'enum') {
    return `${where}: must be one of ${(error.params['allowedValues'] as unknown[]).map(String).join(', ')}`;
  }
  return `${where}: ${error.message ?? 'is invalid'}`;
}
