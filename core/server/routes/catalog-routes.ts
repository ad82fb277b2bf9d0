import type { Request, Response } from 'restify';
import { coreTokens } from '../../tokens.js';
import { authenticate } from '../authentication.js';
import type { RouteModule } from '../route-module.js';

/**
 * The normal catalog of each VDB: what a caller can query with SQL. `GET /api/v1/vdbs` lists the VDBs,
 * `GET /api/v1/vdbs/{vdb}/versions/{version}/catalog` describes one.
 */
export const catalogRoutes: RouteModule = {
  name: 'catalog',
  listener: 'main',
  register(server, container) {
    const vdbs = container.resolve(coreTokens.vdbs);
    const auth = authenticate(container.resolve(coreTokens.authScheme));

    server.get('/api/v1/vdbs', auth, async (_req: Request, res: Response) => {
      res.json(200, {
        vdbs: vdbs.list().map((vdb) => ({
          name: vdb.name,
          version: vdb.version,
          description: vdb.description ?? null,
          catalogRevision: vdb.catalogRevision,
        })),
      });
    });

    server.get('/api/v1/vdbs/:vdb/versions/:version/catalog', auth, async (req: Request, res: Response) => {
      const vdb = vdbs.get(String(req.params['vdb']), String(req.params['version']));
      res.json(200, {
        name: vdb.name,
        version: vdb.version,
        catalogRevision: vdb.catalogRevision,
        schemas: vdb.catalog.schemas,
        relations: vdb.catalog.relations.map(({ datasource: _datasource, ...relation }) => relation),
        functions: vdb.catalog.functions,
      });
    });
  },
};
