import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CatalogRelation } from '../plugin-api/catalog.js';
import { schemaProblems } from '../config/schema-validation.js';
import { readYamlFile, type YamlSource } from '../config/yaml-source.js';
import { formatProblem, messageOf, StartupError, type StartupProblem } from '../plugin-api/errors.js';
import type { Datasource } from '../plugin-api/sql-dialect.js';
import { vdbSchema } from './vdb-schema.js';
import type { VdbCatalog, VdbDefinition, VdbSchema, VirtualDatabase } from '../plugin-api/vdb.js';

/** Opens (once) the datasource of that name; rejects when it is unreachable. */
export type DatasourceOpener = (name: string) => Promise<Datasource>;

interface ParsedVdb {
  source: YamlSource;
  definition: VdbDefinition;
}

/** The VDB files of a bundle, sorted so that problems come out in a stable order. */
function vdbFiles(descriptors: string): string[] {
  const dir = join(descriptors, 'vdbs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

function parseVdbFile(path: string, datasourceNames: ReadonlySet<string>, problems: StartupProblem[]): ParsedVdb | undefined {
  let source: YamlSource;
  try {
    source = readYamlFile(path);
  } catch (error) {
    if (error instanceof StartupError) {
      problems.push(...error.problems);
      return undefined;
    }
    throw error;
  }
  const shapeProblems = schemaProblems(vdbSchema, source.value, source);
  if (shapeProblems.length > 0) {
    problems.push(...shapeProblems);
    return undefined;
  }
  const raw = source.value as Omit<VdbDefinition, 'schemas'> & { schemas: { name: string; datasource?: string; include?: string[] }[] };
  const definition: VdbDefinition = {
    ...raw,
    schemas: raw.schemas.map((schema) => ({ ...schema, datasource: schema.datasource ?? raw.datasource })),
  };
  let valid = true;
  if (!datasourceNames.has(definition.datasource)) {
    problems.push(source.problem(['datasource'], `unknown datasource "${definition.datasource}" (not under datasources in the config)`));
    valid = false;
  }
  raw.schemas.forEach((schema, index) => {
    if (schema.datasource !== undefined && !datasourceNames.has(schema.datasource)) {
      problems.push(source.problem(['schemas', index, 'datasource'], `unknown datasource "${schema.datasource}" (not under datasources in the config)`));
      valid = false;
    }
  });
  return valid ? { source, definition } : undefined;
}

function checkDuplicates(parsed: ParsedVdb[], problems: StartupProblem[]): void {
  const seen = new Map<string, ParsedVdb>();
  for (const vdb of parsed) {
    const key = `${vdb.definition.name}@${vdb.definition.version}`;
    const first = seen.get(key);
    if (first) {
      problems.push(vdb.source.problem(['name'], `duplicate VDB ${vdb.definition.name} version ${vdb.definition.version}: already defined in ${first.source.displayPath}`));
    } else {
      seen.set(key, vdb);
    }
  }
}

async function introspect(vdb: ParsedVdb, open: DatasourceOpener, problems: StartupProblem[]): Promise<VirtualDatabase | undefined> {
  const { definition, source } = vdb;
  const catalog: VdbCatalog = { schemas: [], relations: [], functions: [] };
  const byDatasource = new Map<string, { schema: VdbSchema; index: number }[]>();
  definition.schemas.forEach((schema, index) => {
    byDatasource.set(schema.datasource, [...(byDatasource.get(schema.datasource) ?? []), { schema, index }]);
  });
  const before = problems.length;
  for (const [datasourceName, entries] of byDatasource) {
    let found;
    try {
      const datasource = await open(datasourceName);
      found = await datasource.introspect(entries.map((entry) => entry.schema.name));
    } catch (error) {
      // a datasource that cannot be opened is a problem of the config (said once), not of each VDB file
      if (error instanceof StartupError && error.problems.length > 0) {
        const said = new Set(problems.map(formatProblem));
        problems.push(...error.problems.filter((problem) => !said.has(formatProblem(problem))));
        continue;
      }
      const at = entries[0]?.schema.datasource === definition.datasource ? ['datasource'] : ['schemas', entries[0]?.index ?? 0, 'datasource'];
      problems.push(source.problem(at, `datasource "${datasourceName}" is unreachable: ${messageOf(error)}`));
      continue;
    }
    for (const { schema, index } of entries) {
      if (!found.schemas.includes(schema.name)) {
        problems.push(source.problem(['schemas', index, 'name'], `schema "${schema.name}" not found in datasource "${datasourceName}"`));
        continue;
      }
      const relations = found.relations.filter((relation) => relation.schema === schema.name);
      const included = selectIncluded(relations, schema.include, (name, position) =>
        problems.push(source.problem(['schemas', index, 'include', position], `relation "${schema.name}.${name}" not found in datasource "${datasourceName}"`)));
      catalog.schemas.push(schema.name);
      catalog.relations.push(...included.map((relation) => ({ ...relation, datasource: datasourceName })));
      catalog.functions.push(...found.functions.filter((fn) => fn.schema === schema.name));
    }
  }
  if (problems.length > before) return undefined;
  const catalogRevision = `sha256:${createHash('sha256').update(JSON.stringify(catalog)).digest('hex')}`;
  return { ...definition, file: source.path, catalog, catalogRevision };
}

function selectIncluded(relations: CatalogRelation[], include: string[] | undefined, missing: (name: string, position: number) => void): CatalogRelation[] {
  if (!include) return relations;
  include.forEach((name, position) => {
    if (!relations.some((relation) => relation.name === name)) missing(name, position);
  });
  return relations.filter((relation) => include.includes(relation.name));
}

/**
 * Loads every VDB file of the bundle: schema check, datasource references, duplicate name+version, then
 * catalog introspection. Every problem of every file is collected; any problem throws one StartupError.
 */
export async function loadVdbs(descriptors: string, datasourceNames: ReadonlySet<string>, open: DatasourceOpener): Promise<VirtualDatabase[]> {
  const problems: StartupProblem[] = [];
  const parsed = vdbFiles(descriptors)
    .map((path) => parseVdbFile(path, datasourceNames, problems))
    .filter((vdb): vdb is ParsedVdb => vdb !== undefined);
  checkDuplicates(parsed, problems);
  if (problems.length > 0) throw StartupError.of(problems);
  const vdbs: VirtualDatabase[] = [];
  for (const vdb of parsed) {
    const loaded = await introspect(vdb, open, problems);
    if (loaded) vdbs.push(loaded);
  }
  if (problems.length > 0) throw StartupError.of(problems);
  return vdbs;
}
