import { readdir, readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DEFAULT_MAX_FILE_BYTES, MODULE_MEDIA_TYPE, ProviderError, type ModuleFile, type ModuleReader, type SemanticProvider } from '../../core/plugin-api/index.js';

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

function inside(root: string, path: string): boolean {
  const between = relative(root, path);
  return between !== '' && !between.startsWith('..') && !isAbsolute(between);
}

/** Every file under `dir`, relative and `/`-separated. */
async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(entries.map((entry) => {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    return entry.isDirectory() ? listFiles(dir, path) : Promise.resolve(entry.isFile() ? [path] : []);
  }));
  return nested.flat();
}

/**
 * Modules in the descriptor bundle: `semantic.module.uri` is a folder of the bundle holding manifest.yaml
 * and the documents it lists. A uri that leaves the bundle is refused.
 */
export function bundleProvider(id: string, maxFileBytes = DEFAULT_MAX_FILE_BYTES): SemanticProvider {
  return {
    id,
    mediaTypes: [MODULE_MEDIA_TYPE],
    async open(request): Promise<ModuleReader> {
      const root = resolve(request.descriptors);
      const dir = resolve(root, request.uri);
      if (isAbsolute(request.uri) || !inside(root, dir)) {
        throw new ProviderError('provider.uri_invalid', `module uri "${request.uri}" must be a folder inside the descriptor bundle, e.g. semantic/${request.vdb.name}`);
      }
      const fileOf = (path: string) => {
        const file = resolve(dir, path);
        if (!inside(dir, file)) throw new ProviderError('provider.uri_invalid', `"${path}" is outside the module folder`);
        return file;
      };
      return {
        describe: (path) => toPosix(relative(root, join(dir, path))),
        async read(path): Promise<ModuleFile | undefined> {
          const file = fileOf(path);
          const info = await stat(file).catch(() => undefined);
          if (!info?.isFile()) return undefined;
          if (info.size > maxFileBytes) throw new ProviderError('module.file_too_large', `${toPosix(relative(root, file))} has ${info.size} bytes, more than ${maxFileBytes}`);
          return { bytes: await readFile(file) };
        },
        list: () => listFiles(dir),
      };
    },
  };
}
