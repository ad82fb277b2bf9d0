/**
 * The MCP resources (docs/mcp.md): `vdb://{vdb}/{version}/catalog`, the caller's catalog as
 * `GET /api/v1/vdbs/{vdb}/versions/{version}/catalog` answers it, and `vdb://{vdb}/{version}/semantic-package`,
 * the active semantic package cut to the caller's grants. A VDB the caller has no data role on lists none.
 */
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { effectiveGrants } from '../authorization/grants.js';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { NotFoundError } from '../plugin-api/errors.js';
import { catalogView } from '../server/routes/catalog-routes.js';
import type { McpServices } from './mcp-services.js';
import type { McpTools } from './mcp-tools.js';
import { visiblePackage } from './semantic-view.js';

const URI = /^vdb:\/\/([^/]+)\/([^/]+)\/(catalog|semantic-package)$/;

export class McpResources {
  constructor(private readonly services: McpServices, private readonly tools: McpTools) {}

  list(caller: Principal): Resource[] {
    const registry = this.services.semantic()?.registry;
    return this.services.vdbs.list().filter((vdb) => effectiveGrants(vdb, caller).access !== 'unavailable').flatMap((vdb) => {
      const base = `vdb://${encodeURIComponent(vdb.name)}/${encodeURIComponent(vdb.version)}`;
      const catalog: Resource = { uri: `${base}/catalog`, name: `${vdb.name}@${vdb.version} catalog`, description: `The relations and columns of VDB ${vdb.name} version ${vdb.version} the caller may select.`, mimeType: 'application/json' };
      const pkg: Resource[] = registry?.packageOf(vdb.name, vdb.version)
        ? [{ uri: `${base}/semantic-package`, name: `${vdb.name}@${vdb.version} semantic package`, description: `The active semantic package of VDB ${vdb.name} version ${vdb.version}, as far as the caller's grants reach.`, mimeType: 'application/json' }]
        : [];
      return [catalog, ...pkg];
    });
  }

  templates(): ResourceTemplate[] {
    return [
      { uriTemplate: 'vdb://{vdb}/{version}/catalog', name: 'VDB catalog', description: 'The caller\'s catalog of a VDB version.', mimeType: 'application/json' },
      { uriTemplate: 'vdb://{vdb}/{version}/semantic-package', name: 'Semantic package', description: 'The active semantic package of a VDB version, cut to the caller\'s grants.', mimeType: 'application/json' },
    ];
  }

  /** @throws ServiceError when there is no such resource for the caller. */
  read(uri: string, caller: Principal): ReadResourceResult {
    const match = URI.exec(uri);
    if (!match) throw new NotFoundError('not_found', `no resource ${uri}`);
    const [, vdbName, version, kind] = match as unknown as [string, string, string, string];
    const vdb = this.services.vdbs.get(decodeURIComponent(vdbName), decodeURIComponent(version));
    const grants = this.tools.grantsOn(vdb, caller);
    let document: object;
    if (kind === 'catalog') {
      document = catalogView(vdb, grants);
    } else {
      const pkg = this.services.semantic()?.registry.packageOf(vdb.name, vdb.version)?.document;
      if (!pkg) throw new NotFoundError('not_found', `VDB ${vdb.name} version ${vdb.version} has no active semantic package`);
      document = visiblePackage(pkg, grants);
    }
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(document) }] };
  }
}
