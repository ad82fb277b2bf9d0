import type { Request, Response } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import { ForbiddenError, NotFoundError, UnavailableError } from '../../plugin-api/errors.js';
import { detailOf, summaryOf, type SemanticRegistry } from '../../semantic/semantic-registry.js';
import type { VdbActivation } from '../../semantic/semantic-types.js';
import { coreTokens } from '../../service-tokens.js';
import { authenticate } from '../authentication.js';
import { callerOf } from '../request-context.js';
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
 * diagnostics) and `.../package` (200 with the package and its digest as ETag, 409 with the detail when the
 * VDB has no package, 404 when the VDB is not active). Served on the admin listener when there is one.
 */
export const adminRoutes: RouteModule = {
  name: 'admin',
  listener: 'admin',
  register(server, container) {
    const adminRoles = new Set(container.resolve(coreTokens.config).auth.adminRoles);
    const auth = authenticate(container.resolve(coreTokens.authScheme));
    const requireAdmin = async (req: Request) => {
      if (!callerOf(req).roles.some((role) => adminRoles.has(role))) {
        throw new ForbiddenError('forbidden', 'the semantic admin API needs an admin role (auth.adminRoles)');
      }
    };

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
        res.json(409, detailOf(activation));
        return;
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
  },
};
