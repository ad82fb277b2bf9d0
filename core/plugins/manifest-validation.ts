import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import { satisfies, validRange } from 'semver';
import { PLUGIN_API_VERSION } from '../plugin-api/api-version.js';
import type { PluginManifest } from '../plugin-api/plugin-manifest.js';

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

// dist/core/plugins -> project root, where package.json names the core's version.
const packagePath = fileURLToPath(new URL('../../../package.json', import.meta.url));
/** The version of this service that plugins may declare compatibility with (`coreVersion`). */
export const CORE_VERSION = (JSON.parse(readFileSync(packagePath, 'utf8')) as { version: string }).version;

/** What a manifest without `apiVersion` was written for: the API as it stood when it got its first version. */
const UNDECLARED_API_RANGE = '^1.0.0';

/**
 * Why the manifest's `apiVersion` range excludes this service's plugin API, or undefined when it includes
 * it. A manifest naming none is read as written for `^1.0.0`.
 */
export function apiVersionProblem(manifest: PluginManifest, apiVersion = PLUGIN_API_VERSION): string | undefined {
  const range = manifest.apiVersion ?? UNDECLARED_API_RANGE;
  if (validRange(range) === null) return `apiVersion "${range}" is not a semver range (e.g. "^1.0.0")`;
  if (!satisfies(apiVersion, range, { includePrerelease: true })) {
    const declared = manifest.apiVersion === undefined ? `${range} (no apiVersion, read as ${range})` : `${range} (apiVersion)`;
    return `needs plugin API ${declared}, but vdb-service ${CORE_VERSION} provides plugin API ${apiVersion} (docs/plugin-api-changelog.md)`;
  }
  return undefined;
}

/**
 * Why the manifest's `coreVersion` range excludes this core, or undefined when it includes it (or names
 * none). Pre-releases of the core count as the release they lead to.
 */
export function coreVersionProblem(manifest: PluginManifest, coreVersion = CORE_VERSION): string | undefined {
  const range = manifest.coreVersion;
  if (range === undefined) return undefined;
  if (validRange(range) === null) return `coreVersion "${range}" is not a semver range (e.g. "^0.1.0")`;
  if (!satisfies(coreVersion, range, { includePrerelease: true })) {
    return `needs vdb-service ${range} (coreVersion), but this is ${coreVersion}`;
  }
  return undefined;
}
