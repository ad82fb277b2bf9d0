import { catalogModule, MODULE_MEDIA_TYPE, ProviderError, type ModuleReader, type SemanticProvider } from '../../core/plugin-api/index.js';

/**
 * A model derived from the VDB's own catalog (core/semantic/catalog-model.ts): `uri` is `catalog:` for
 * every schema of the VDB, or `catalog:sales,stock` for some. The module it delivers is named
 * `<vdb>-catalog`, versioned as the VDB, and its digest changes when the catalog does: the reference's
 * sha256 pins the catalog the model was reviewed against.
 */
export function catalogProvider(id: string): SemanticProvider {
  return {
    id,
    mediaTypes: [MODULE_MEDIA_TYPE],
    async open(request): Promise<ModuleReader> {
      const match = /^catalog:([A-Za-z_][A-Za-z0-9_$-]*(?:,[A-Za-z_][A-Za-z0-9_$-]*)*)?$/.exec(request.uri);
      if (!match) throw new ProviderError('provider.uri_invalid', `"${request.uri}" is not catalog: or catalog:<schema>[,<schema>...]`);
      const { vdb } = request;
      const schemas = match[1]?.split(',');
      const unknown = schemas?.find((schema) => !vdb.catalog.schemas.includes(schema));
      if (unknown) throw new ProviderError('provider.uri_invalid', `${unknown} is not a schema of VDB ${vdb.name} ${vdb.version}`);
      const module = await catalogModule(vdb, request.dialectOf, { name: `${vdb.name}-catalog`, version: vdb.version, ...(schemas ? { schemas } : {}) });
      const files = new Map(module.files.map((file) => [file.path, Buffer.from(file.text)]));
      return {
        describe: (path) => `catalog:${vdb.name}@${vdb.version}/${path}`,
        read: async (path) => {
          const bytes = files.get(path);
          return bytes ? { bytes } : undefined;
        },
        list: async () => [...files.keys()],
      };
    },
  };
}
