import type { Request, Response } from 'restify';
import { authorizedContext } from '../../authorization/authorized-context.js';
import { effectiveGrants, type CallerGrants } from '../../authorization/grants.js';
import type { Principal } from '../../plugin-api/auth-scheme.js';
import { ForbiddenError } from '../../plugin-api/errors.js';
import type { AccessLevel } from '../../plugin-api/task-documents.js';
import { PerGrantSet } from '../../caching/per-grant-set.js';
import { coreTokens } from '../../service-tokens.js';
import type { VdbRelation, VirtualDatabase } from '../../plugin-api/vdb.js';
import { LOGICAL_TYPES } from '../../plugin-api/catalog.js';
import { authenticate } from '../authentication.js';
import { CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { jsonResponse, VDB_PARAMETERS } from '../openapi/operation-parts.js';
import type { DescribedRoute, JsonSchema } from '../openapi/openapi-types.js';
import { callerOf } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/**
 * The normal catalog of each VDB: what a caller can query with SQL, as far as its data roles let it see.
 * `GET /api/v1/vdbs` lists the VDBs with the caller's access, `GET /api/v1/vdbs/{vdb}/versions/{version}/catalog`
 * describes one: only the relations, columns and functions the caller may select.
 */
export const catalogRoutes: RouteModule = {
  name: 'catalog',
  listener: 'main',
  register(server, container) {
    const vdbs = container.resolve(coreTokens.vdbs);
    const auth = authenticate(container.resolve(coreTokens.authScheme));

    server.get('/api/v1/vdbs', auth, async (req: Request, res: Response) => {
      const caller = callerOf(req);
      res.json(200, { vdbs: vdbs.list().map((vdb) => listedVdb(vdb, caller)) });
    });

    server.get('/api/v1/vdbs/:vdb/versions/:version/catalog', auth, async (req: Request, res: Response) => {
      const vdb = vdbs.get(String(req.params['vdb']), String(req.params['version']));
      const grants = effectiveGrants(vdb, callerOf(req));
      if (grants.access === 'unavailable') throw new ForbiddenError('forbidden', `the caller has no data role on VDB ${vdb.name} version ${vdb.version}`);
      res.json(200, catalogView(vdb, grants));
    });
  },
  describe: describeCatalogRoutes,
};

/** A VDB as the lists show it: `GET /api/v1/vdbs` and MCP's `list_vdbs`. */
export interface ListedVdb {
  name: string;
  version: string;
  description?: string | null;
  catalogRevision?: string;
  access: AccessLevel;
}

/**
 * A caller with no data role on the VDB learns only that it exists (its name, version and access), not what
 * it holds: no description, no revision of its catalog.
 */
export function listedVdb(vdb: VirtualDatabase, caller: Principal): ListedVdb {
  const grants = effectiveGrants(vdb, caller);
  if (grants.access === 'unavailable') return { name: vdb.name, version: vdb.version, access: grants.access };
  return { name: vdb.name, version: vdb.version, description: vdb.description ?? null, catalogRevision: vdb.catalogRevision, access: authorizedContext(vdb, grants).access };
}

const ACCESS_SCHEMA: JsonSchema = {
  enum: ['complete', 'restricted', 'unavailable'],
  description: '`complete`: the VDB has no data roles; `restricted`: the grants of the caller\'s roles; `unavailable`: no role of the caller matches.',
};

const STRINGS: JsonSchema = { type: 'array', items: { type: 'string' } };

const RELATION_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['schema', 'name', 'kind', 'columns'],
  properties: {
    schema: { type: 'string' },
    name: { type: 'string' },
    kind: { enum: ['table', 'view'] },
    columns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'logicalType', 'nullable'],
        properties: { name: { type: 'string' }, nativeType: { type: 'string' }, logicalType: { enum: LOGICAL_TYPES }, nullable: { type: 'boolean' } },
      },
    },
    primaryKey: STRINGS,
    uniqueKeys: { type: 'array', items: STRINGS },
    foreignKeys: { type: 'array', items: { type: 'object' } },
  },
};

function describeCatalogRoutes(): DescribedRoute[] {
  const errors = errorResponses({ standard: [...CREDENTIAL_ERRORS, 'startup_blocked'] });
  return [
    {
      method: 'get',
      path: '/api/v1/vdbs',
      operation: {
        operationId: 'listVdbs',
        summary: 'Every VDB, with the caller\'s access',
        tags: ['catalog'],
        responses: {
          '200': jsonResponse('The VDBs.', {
            type: 'object',
            required: ['vdbs'],
            properties: {
              vdbs: {
                type: 'array',
                items: {
                  type: 'object',
                  description: 'A VDB whose `access` is `unavailable` is listed with its name, version and access only.',
                  required: ['name', 'version', 'access'],
                  properties: {
                    name: { type: 'string' }, version: { type: 'string' }, description: { type: ['string', 'null'] },
                    catalogRevision: { type: 'string', description: 'sha256 of the catalog: changes when the catalog does.' }, access: ACCESS_SCHEMA,
                  },
                },
              },
            },
          }),
          ...errors,
        },
      },
    },
    {
      method: 'get',
      path: '/api/v1/vdbs/{vdb}/versions/{version}/catalog',
      operation: {
        operationId: 'getCatalog',
        summary: 'The catalog of one VDB version, as far as the caller may select',
        description: 'Only the relations, columns and functions the caller\'s data roles let it select.',
        tags: ['catalog'],
        parameters: VDB_PARAMETERS,
        responses: {
          '200': jsonResponse('The catalog.', {
            type: 'object',
            required: ['name', 'version', 'catalogRevision', 'access', 'schemas', 'relations', 'functions'],
            properties: {
              name: { type: 'string' }, version: { type: 'string' }, catalogRevision: { type: 'string' }, access: ACCESS_SCHEMA,
              schemas: STRINGS, relations: { type: 'array', items: RELATION_SCHEMA }, functions: { type: 'array', items: { type: 'object' } },
            },
          }),
          ...errorResponses({ standard: [...CREDENTIAL_ERRORS, 'forbidden', 'vdb_not_found', 'startup_blocked'] }),
        },
      },
    },
  ];
}

/** Catalog views by VDB and grant set: both are fixed for the life of the process, so each is built once. */
const views = new PerGrantSet<VirtualDatabase, CallerGrants, object>();

/** The catalog as far as the grants let the caller select. */
export function catalogView(vdb: VirtualDatabase, grants: CallerGrants): object {
  return views.get(vdb, grants, () => {
    const visible = authorizedContext(vdb, grants);
    const relations = grants.access === 'complete' ? vdb.catalog.relations : vdb.catalog.relations.flatMap((relation) => {
      const seen = visible.relations.find((candidate) => candidate.schema === relation.schema && candidate.name === relation.name);
      return seen ? [restricted(relation, seen.columns.map((column) => column.name), seen)] : [];
    });
    return {
      name: vdb.name,
      version: vdb.version,
      catalogRevision: vdb.catalogRevision,
      access: visible.access,
      schemas: vdb.catalog.schemas,
      relations: relations.map(({ datasource: _datasource, ...relation }) => relation),
      functions: grants.access === 'complete' ? vdb.catalog.functions : vdb.catalog.functions.filter((fn) => visible.functions.some((seen) => seen.schema === fn.schema && seen.name === fn.name)),
    };
  });
}

/** The relation as far as the caller sees it: its visible columns, and keys only over those. */
function restricted(relation: VdbRelation, columns: readonly string[], seen: { primaryKey: string[]; foreignKeys: VdbRelation['foreignKeys'] }): VdbRelation {
  return {
    ...relation,
    columns: relation.columns.filter((column) => columns.includes(column.name)),
    primaryKey: seen.primaryKey,
    uniqueKeys: relation.uniqueKeys.filter((key) => key.every((column) => columns.includes(column))),
    foreignKeys: seen.foreignKeys,
  };
}
