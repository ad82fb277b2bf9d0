/**
 * The parts of an OpenAPI 3.1 document the service writes (https://spec.openapis.org/oas/v3.1.0): route
 * modules describe their operations with these, core/server/openapi/openapi-document.ts assembles them.
 */

/** A JSON Schema of draft 2020-12, OpenAPI 3.1's schema dialect. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** A body in one media type, with named examples (swagger-ui offers them in a list). */
export interface MediaType {
  schema: JsonSchema;
  examples?: Record<string, { summary?: string; value: unknown }>;
}

/** The answer of one status. */
export interface ApiResponse {
  description: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
  content?: Record<string, MediaType>;
}

/** A path, query or header parameter. */
export interface ApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description: string;
  schema: JsonSchema;
}

/** One method on one path. */
export interface ApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** `[]` for a route without authentication; absent: the document's default, the bearer scheme. */
  security?: Record<string, string[]>[];
  parameters?: ApiParameter[];
  requestBody?: { required: boolean; description?: string; content: Record<string, MediaType> };
  responses: Record<string, ApiResponse>;
}

/** The methods a path item may hold. */
export type HttpMethod = 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete';

/** One operation a route module serves; `path` in OpenAPI's form, `{name}` where restify has `:name`. */
export interface DescribedRoute {
  method: HttpMethod;
  path: string;
  operation: ApiOperation;
}
