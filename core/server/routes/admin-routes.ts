import type { Request, Response } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import { ConflictError, InputError, InternalError, NotFoundError, UnavailableError } from '../../plugin-api/errors.js';
import { OSSIE_VERSION } from '../../semantic/ossie-document.js';
import { ossieSchemaProblems } from '../../semantic/ossie-export.js';
import { detailOf, summaryOf, type SemanticRegistry } from '../../semantic/semantic-registry.js';
import type { VdbActivation } from '../../semantic/semantic-types.js';
import { coreTokens } from '../../service-tokens.js';
import { requireAdminRole } from '../admin-role.js';
import { authenticate } from '../authentication.js';
import { CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { cacheControl, jsonResponse, VDB_PARAMETERS } from '../openapi/operation-parts.js';
import type { ApiOperation, ApiResponse, DescribedRoute, JsonSchema } from '../openapi/openapi-types.js';
import type { RouteModule } from '../route-module.js';

function registryOf(container: DependencyContainer): SemanticRegistry {
  if (!container.isRegistered(coreTokens.semantic, true)) {
    throw new UnavailableError('semantic_initializing', 'semantic activation has not finished yet');
  }
  return container.resolve(coreTokens.semantic);
}

function activationOf(registry: SemanticRegistry, req: Request): VdbActivation {
  const name = String(req.params['vdb']);
  const version = String(req.params['version']);
  const activation = registry.find(name, version);
  if (!activation) throw new NotFoundError('vdb_not_found', `VDB ${name} version ${version} is not active`);
  return activation;
}

/** 409 for a VDB without a package: the VDB detail (with its diagnostics) as the body, the code and why in a sentence beside it. */
function packageUnavailable(activation: VdbActivation): ConflictError {
  const detail = detailOf(activation);
  const cause = detail.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
  const why = cause ? `: ${cause.document}:${cause.location.line}: ${cause.code}` : '';
  return new ConflictError('semantic_package_unavailable',
    `VDB ${activation.name} version ${activation.version} has no semantic package: its state is ${activation.state}${why}`, { body: { ...detail } });
}

/** The strong ETag of a package: its digest, quoted as RFC 9110 wants. */
function etagOf(digest: string): string {
  return `"${digest}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch !== undefined && ifNoneMatch.split(',').map((tag) => tag.trim().replace(/^W\//, '')).some((tag) => tag === etag || tag === '*');
}

/**
 * The read-only semantic admin API (docs/semantic.md), for callers with a role of `auth.adminRoles`:
 * `GET /api/v1/admin/semantic/vdbs` (summaries), `.../vdbs/{vdb}/versions/{version}` (detail with
 * diagnostics), `.../package` (200 with the package and its digest as ETag, 409
 * `semantic_package_unavailable`, the body being the VDB detail, when the VDB has no package, 404 when the VDB is not active)
 * and `.../model?format=ossie` (the model as an Apache Ossie document, the same 409 and 404). Served on the admin listener when there is one.
 */
export const adminRoutes: RouteModule = {
  name: 'admin',
  listener: 'admin',
  register(server, container) {
    const auth = authenticate(container.resolve(coreTokens.authScheme));
    const requireAdmin = requireAdminRole(container.resolve(coreTokens.config).auth.adminRoles, 'the semantic admin API needs an admin role (auth.adminRoles)');

    server.get('/api/v1/admin/semantic/vdbs', auth, requireAdmin, async (_req: Request, res: Response) => {
      res.header('Cache-Control', 'no-store');
      res.json(200, { vdbs: registryOf(container).list().map(summaryOf) });
    });

    server.get('/api/v1/admin/semantic/vdbs/:vdb/versions/:version', auth, requireAdmin, async (req: Request, res: Response) => {
      res.header('Cache-Control', 'no-store');
      res.json(200, detailOf(activationOf(registryOf(container), req)));
    });

    server.get('/api/v1/admin/semantic/vdbs/:vdb/versions/:version/package', auth, requireAdmin, async (req: Request, res: Response) => {
      const activation = activationOf(registryOf(container), req);
      if (!activation.package) {
        res.header('Cache-Control', 'no-store');
        throw packageUnavailable(activation);
      }
      const etag = etagOf(activation.package.digest);
      // The package never changes while the process runs; a client revalidates with If-None-Match.
      res.header('Cache-Control', 'no-cache');
      res.header('ETag', etag);
      if (matches(req.header('if-none-match') || undefined, etag)) {
        res.status(304);
        res.end();
        return;
      }
      res.header('Content-Type', 'application/json');
      res.sendRaw(200, activation.package.canonicalJson);
    });

    server.get('/api/v1/admin/semantic/vdbs/:vdb/versions/:version/model', auth, requireAdmin, async (req: Request, res: Response) => {
      const format = new URL(req.url ?? '/', 'http://host').searchParams.get('format') ?? 'ossie';
      if (format !== 'ossie') throw new InputError('invalid_request', `format ${format} is not one the model is exported in (ossie)`);
      const activation = activationOf(registryOf(container), req);
      res.header('Cache-Control', 'no-store');
      if (!activation.package) throw packageUnavailable(activation);
      const document = activation.package.ossie;
      const problems = ossieSchemaProblems(document);
      if (problems.length > 0) throw new InternalError('internal_error', undefined, { cause: new Error(`the Ossie export of ${activation.name} ${activation.version} does not fit Ossie's schema: ${problems.join('; ')}`) });
      res.json(200, document);
    });
  },
  describe(container) {
    const separate = container.resolve(coreTokens.config).server.admin !== undefined;
    return describeAdminRoutes(separate ? ' Served on the admin listener (`server.admin`), not on this one.' : '');
  },
};

const SUMMARY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'state', 'packageAvailable', 'packageDigest'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    generation: { type: 'integer' },
    state: { enum: ['catalogOnly', 'invalid', 'compileFailed', 'active'] },
    activationFailurePolicy: { enum: ['isolate', 'blockStartup'] },
    packageAvailable: { type: 'boolean' },
    packageDigest: { type: ['string', 'null'] },
    diagnosticCount: { type: 'integer' },
    errorCount: { type: 'integer' },
    warningCount: { type: 'integer' },
  },
};

const DETAIL_SCHEMA: JsonSchema = {
  allOf: [SUMMARY_SCHEMA],
  properties: {
    diagnostics: { type: 'array', items: { type: 'object' }, description: 'Every diagnostic, root cause first (docs/diagnostics.md).' },
    compilationFailure: { type: ['object', 'null'] },
  },
};

/** The package route's 409: the VDB detail, with the error's code, message and (empty) details beside it. */
const PACKAGE_UNAVAILABLE_SCHEMA: JsonSchema = {
  allOf: [DETAIL_SCHEMA],
  required: ['code', 'message'],
  properties: { code: { const: 'semantic_package_unavailable' }, message: { type: 'string' }, details: { type: 'object' } },
};

function describeAdminRoutes(listenerNote: string): DescribedRoute[] {
  const errors = (...more: ErrorCode[]) => errorResponses({ standard: [...CREDENTIAL_ERRORS, 'forbidden', 'semantic_initializing', ...more] });
  const packageErrors = errors('vdb_not_found', 'semantic_package_unavailable');
  const conflict = packageErrors['409'] as ApiResponse;
  packageErrors['409'] = { ...conflict, content: { 'application/json': { schema: PACKAGE_UNAVAILABLE_SCHEMA } } };
  const modelErrors = { ...errors('invalid_request', 'vdb_not_found', 'semantic_package_unavailable'), '409': packageErrors['409'] };
  const operation = (fields: Omit<ApiOperation, 'tags'>): ApiOperation => ({ ...fields, description: `${fields.description ?? ''}${listenerNote}`, tags: ['admin'] });
  return [
    {
      method: 'get',
      path: '/api/v1/admin/semantic/vdbs',
      operation: operation({
        operationId: 'listSemanticVdbs',
        summary: 'The semantic state of every VDB version',
        description: 'One summary per VDB name and version.',
        responses: {
          '200': jsonResponse('The summaries.', { type: 'object', required: ['vdbs'], properties: { vdbs: { type: 'array', items: SUMMARY_SCHEMA } } }, cacheControl('no-store')),
          ...errors(),
        },
      }),
    },
    {
      method: 'get',
      path: '/api/v1/admin/semantic/vdbs/{vdb}/versions/{version}',
      operation: operation({
        operationId: 'getSemanticVdb',
        summary: 'The semantic state of one VDB version, with its diagnostics',
        description: 'The summary, every diagnostic and the compilation failure, if any.',
        parameters: VDB_PARAMETERS,
        responses: { '200': jsonResponse('The detail.', DETAIL_SCHEMA, cacheControl('no-store')), ...errors('vdb_not_found') },
      }),
    },
    {
      method: 'get',
      path: '/api/v1/admin/semantic/vdbs/{vdb}/versions/{version}/package',
      operation: operation({
        operationId: 'getSemanticPackage',
        summary: 'The compiled semantic package of one VDB version',
        description: 'The canonical JSON of the package; its digest is the strong `ETag`, so `If-None-Match` answers 304 while it is the same.',
        parameters: VDB_PARAMETERS,
        responses: {
          '200': {
            description: 'The package (canonical JSON, RFC 8785).',
            headers: { ETag: { description: 'The package digest, quoted.', schema: { type: 'string' } }, ...cacheControl('no-cache') },
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          '304': { description: 'The package is the one of the `If-None-Match` tag.' },
          ...packageErrors,
        },
      }),
    },
    {
      method: 'get',
      path: '/api/v1/admin/semantic/vdbs/{vdb}/versions/{version}/model',
      operation: operation({
        operationId: 'exportSemanticModel',
        summary: 'The active semantic model as an Apache Ossie document',
        description: `The model the package was compiled from, as an Apache Ossie document (version ${OSSIE_VERSION}) that validates against Ossie's JSON Schema: Ossie's keys only, every expression the \`ANSI_SQL\` variant of the SQL the service compiled, sources \`schema.relation\`. Loaded as the module of another VDB over the same datasource, it answers the same queries with the same numbers.`,
        parameters: [...VDB_PARAMETERS, { name: 'format', in: 'query', required: false, description: 'The document format; `ossie` (the default) is the only one.', schema: { type: 'string', enum: ['ossie'] } }],
        responses: {
          '200': jsonResponse('The Ossie document.', {
            type: 'object', required: ['version', 'semantic_model'],
            properties: { version: { const: OSSIE_VERSION }, semantic_model: { type: 'array', items: { type: 'object' } } },
          }, cacheControl('no-store')),
          ...modelErrors,
        },
      }),
    },
  ];
}
