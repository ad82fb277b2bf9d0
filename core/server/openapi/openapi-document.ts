import type { DependencyContainer } from 'tsyringe';
import { CORE_VERSION } from '../../plugins/manifest-validation.js';
import { coreTokens } from '../../service-tokens.js';
import type { RouteModule } from '../route-module.js';
import { errorSchemas } from './error-responses.js';
import type { ApiOperation, HttpMethod, JsonSchema } from './openapi-types.js';
import { taskSnapshotSchema } from './task-schemas.js';

/** An OpenAPI 3.1 document, as `GET /api/v1/openapi.json` answers it. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Partial<Record<HttpMethod, ApiOperation>>>;
  components: { securitySchemes: Record<string, JsonSchema>; schemas: Record<string, JsonSchema> };
}

/** The tags operations are grouped by, in the order a reader meets them. */
const TAGS = [
  { name: 'discovery', description: 'What this service offers: this document, its reference page, the index.' },
  { name: 'queries', description: 'Query endpoints of the bundle (`descriptors/queries/`), one operation each (docs/endpoints.md).' },
  { name: 'actions', description: 'Action endpoints of the bundle (`descriptors/actions/`), one operation each (docs/endpoints.md).' },
  { name: 'tasks', description: 'The Task API: a question for the agent runtime, answered as the caller (docs/tasks.md).' },
  { name: 'catalog', description: 'The VDBs and their catalogs, as far as the caller\'s data roles let it see.' },
  { name: 'admin', description: 'The semantic admin API, for a role of `auth.adminRoles` (docs/semantic.md).' },
  { name: 'observe', description: 'Health and metrics for operators (docs/observability.md).' },
];

/**
 * The OpenAPI document of the service, built from what the route modules describe: each module says what
 * it serves, reading the loaded definitions and the config where its routes depend on them (one operation
 * per query and action, the configured capabilities). Names no secret: the bearer scheme says where a
 * token goes, never one.
 * @throws Error when two modules describe the same method and path.
 */
export function openApiDocument(modules: readonly RouteModule[], container: DependencyContainer): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const module of modules) {
    for (const { method, path, operation } of module.describe?.(container) ?? []) {
      const item = (paths[path] ??= {});
      if (item[method]) throw new Error(`${method.toUpperCase()} ${path} is described twice (route module ${module.name})`);
      item[method] = operation;
    }
  }
  const scheme = container.resolve(coreTokens.config).auth.scheme;
  return {
    openapi: '3.1.0',
    info: {
      title: 'vdb-service',
      version: CORE_VERSION,
      description: 'Virtual databases over HTTP: declarative query and action endpoints, catalogs, the semantic admin API '
        + 'and the Task API. Generated from the routes and definitions this instance serves.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'this instance' }],
    security: [{ bearer: [] }],
    tags: TAGS,
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          ...(scheme === 'jwt' ? { bearerFormat: 'JWT' } : {}),
          description: `\`Authorization: Bearer <token>\`, checked by the \`${scheme}\` scheme (auth.scheme); the token's roles decide what the caller may read and run.`,
        },
      },
      schemas: { ...errorSchemas(), TaskSnapshot: taskSnapshotSchema() },
    },
  };
}
