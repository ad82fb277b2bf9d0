/**
 * `vdb-service semantic scaffold <vdb> <version> [--out DIR] [--config FILE]`: writes the starter model
 * that the catalog gives (core/semantic/catalog-model.ts) as a module of the descriptor bundle, with its
 * digests, and prints the `semantic` section to put into the VDB file.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { configFileFrom } from '../config/config-loader.js';
import { logDestination } from '../logging.js';
import { StartupError } from '../plugin-api/errors.js';
import { prepareService, type PreparedService } from '../service.js';
import { coreTokens } from '../service-tokens.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { catalogModule } from '../semantic/catalog-model.js';
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';

export const SCAFFOLD_USAGE = 'vdb-service semantic scaffold <vdb> <version> [--out DIR] [--config FILE]';

export interface ScaffoldResult {
  /** Absolute path of the module folder written. */
  directory: string;
  files: string[];
  /** The `semantic` section for the VDB file, as YAML. */
  reference: string;
}

/**
 * Writes the catalog-derived module of `vdb` into `directory` (default `<bundle>/semantic/<vdb>-<version>`).
 * Refuses to overwrite a folder that already holds a manifest.
 */
export async function scaffoldModule(
  vdb: VirtualDatabase,
  dialectOf: (datasource: string) => ExpressionDialect,
  descriptors: string,
  directory = join(descriptors, 'semantic', `${vdb.name}-${vdb.version}`),
): Promise<ScaffoldResult> {
  const target = resolve(directory);
  if (existsSync(join(target, 'manifest.yaml'))) {
    throw new StartupError(`${target} already holds a manifest.yaml; choose another folder with --out`);
  }
  const module = await catalogModule(vdb, dialectOf, { name: `${vdb.name}-semantic`, version: '1.0.0' });
  mkdirSync(target, { recursive: true });
  for (const file of module.files) writeFileSync(join(target, file.path), file.text);
  const inBundle = relative(resolve(descriptors), target);
  const uri = inBundle.startsWith('..') || isAbsolute(inBundle) ? undefined : inBundle.split(sep).join('/');
  const reference = [
    'semantic:',
    ...(uri ? [] : ['  # The bundle provider reads modules inside the descriptor bundle only: move the folder there first.']),
    `  module: { uri: ${uri ?? '<folder in the bundle>'}, name: ${vdb.name}-semantic, version: 1.0.0, sha256: ${module.manifestSha256} }`,
  ].join('\n');
  return { directory: target, files: module.files.map((file) => join(target, file.path)), reference: `${reference}\n` };
}

/** Runs the scaffold for a prepared service: its VDB registry has the introspected catalogs. */
export async function scaffoldFromService(service: PreparedService, name: string, version: string, directory?: string): Promise<ScaffoldResult> {
  const vdb = service.container.resolve(coreTokens.vdbs).get(name, version);
  const datasources = service.container.resolve(coreTokens.datasources);
  const dialects = new Map<string, ExpressionDialect>();
  for (const schema of vdb.schemas) dialects.set(schema.datasource, (await datasources.open(schema.datasource)).dialect);
  dialects.set(vdb.datasource, (await datasources.open(vdb.datasource)).dialect);
  return scaffoldModule(vdb, (datasource) => dialects.get(datasource) as ExpressionDialect, service.config.descriptors, directory);
}

/** The `semantic` command of the CLI; returns the exit code. Output goes to stdout, problems to stderr. */
export async function semanticCommand(argv: string[]): Promise<number> {
  const [subcommand, name, version, ...options] = argv;
  if (subcommand !== 'scaffold' || !name || !version || name.startsWith('--') || version.startsWith('--')) {
    process.stderr.write(`usage: ${SCAFFOLD_USAGE}\n`);
    return 2;
  }
  const outFlag = options.indexOf('--out');
  const out = outFlag >= 0 ? options[outFlag + 1] : options.find((option) => option.startsWith('--out='))?.slice('--out='.length);
  if (outFlag >= 0 && (!out || out.startsWith('--'))) throw new StartupError('--out needs a folder path');
  // stdout says what was written and the section to paste: the JSON logs go to stderr
  const service = await prepareService({ configFile: configFileFrom(options, process.env), env: process.env, logDestination: logDestination(2) });
  try {
    const result = await scaffoldFromService(service, name, version, out === undefined ? undefined : resolve(out));
    process.stdout.write(`wrote ${result.files.join(', ')}\nadd to the VDB file:\n\n${result.reference}`);
    return 0;
  } finally {
    await service.close();
  }
}
