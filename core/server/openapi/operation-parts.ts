import { JSON_MEDIA_TYPES, YAML_MEDIA_TYPES } from '../body-parsing.js';
import type { ApiOperation, ApiParameter, ApiResponse, JsonSchema, MediaType } from './openapi-types.js';

/** The security of an operation that needs no credentials. */
export const NO_AUTH: ApiOperation['security'] = [];

/** A required path segment, e.g. `{vdb}`. */
export function pathParameter(name: string, description: string, schema: JsonSchema = { type: 'string' }): ApiParameter {
  return { name, in: 'path', required: true, description, schema };
}

/** The VDB name and version of a versioned path. */
export const VDB_PARAMETERS: ApiParameter[] = [
  pathParameter('vdb', 'The VDB name.'),
  pathParameter('version', 'The VDB version.'),
];

/** A JSON answer. */
export function jsonResponse(description: string, schema: JsonSchema, headers?: ApiResponse['headers']): ApiResponse {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema } } };
}

/** A request body the route reads with core/server/body-parsing.ts: JSON or YAML, the same schema. */
export function bodyContent(schema: JsonSchema): Record<string, MediaType> {
  return Object.fromEntries([...JSON_MEDIA_TYPES, YAML_MEDIA_TYPES[0] as string].map((mediaType) => [mediaType, { schema }]));
}

/** `Cache-Control` as a route sets it. */
export function cacheControl(value: string): NonNullable<ApiResponse['headers']> {
  return { 'Cache-Control': { description: `Always \`${value}\`.`, schema: { type: 'string', const: value } } };
}
