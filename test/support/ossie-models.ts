/**
 * The public Apache Ossie models of test/fixtures/ossie (copied unchanged, see SOURCE.md there): which
 * validate against Ossie's JSON Schema of their version, and a PostgreSQL schema holding the relations and
 * columns each one binds to, so that a test can package a model as the service packages models (manifest,
 * digests, VDB file) and activate it unchanged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import yaml from 'js-yaml';
import { loadModule } from 'libpg-query';
import { parseExpression } from '../../core/semantic-query/expression-parser.js';
import { nodesOf } from '../../core/semantic-query/expression-ast.js';
import { sha256Of } from './semantic-test-support.js';
import { projectRoot } from './test-service.js';

export const ossieRoot = join(projectRoot, 'test', 'fixtures', 'ossie');

/** The schema of each document version that has one (0.1.0 never had one). */
const SCHEMA_FILES: Record<string, string> = {
  '0.1.1': 'v0.1.1/core-spec/osi-schema.json',
  '0.2.0.dev0': 'core-spec/osi-schema.json',
};

/** Every Ossie document of the examples and converter fixtures, by its path in the repository. */
export const OSSIE_DOCUMENT_FILES = [
  'examples/tpcds_semantic_model.yaml',
  'examples/flights.yaml',
  'converters/databricks/tests/fixtures/fixtureA_ossie.yaml',
  'converters/databricks/tests/fixtures/fixtureB_ossie.yaml',
  'converters/databricks/tests/fixtures/tpcds_ossie.yaml',
  'converters/gooddata/tests/fixtures/osi_tpcds.yaml',
  'converters/gsf/tests/fixtures/sales.ossie.yaml',
  'converters/omni/tests/fixtures/fixtureA_osi.yaml',
  'converters/orionbelt/tests/fixtures/obml_as_osi.yaml',
  'converters/orionbelt/tests/fixtures/tpcds_osi.yaml',
  'converters/orionbelt/tests/fixtures/tpcds_semantic_model.yaml',
  'converters/salesforce/src/test/resources/examples/osiToSalesforce.yaml',
] as const;

/** The dbt converter writes no fixture file: its Ossie output is in its snapshot, one document per `# name:` block. */
const DBT_SNAPSHOT = 'converters/dbt/tests/__snapshots__/test_msi_to_osi.ambr';

interface OssieDocument {
  version?: unknown;
  semantic_model?: OssieModel[];
}
interface OssieExpression { dialects: { dialect: string; expression: string }[] }
interface OssieModel {
  name: string;
  datasets: { name: string; source: string; primary_key?: string[]; unique_keys?: string[][]; fields?: { name: string; expression: OssieExpression; datatype?: string }[] }[];
  relationships?: { from: string; to: string; from_columns: string[]; to_columns: string[] }[];
  metrics?: { name: string; expression: OssieExpression }[];
}

export interface OssieFixture {
  /** Where it is in apache/ossie (a dbt snapshot block: `<file>#<test name>`). */
  name: string;
  /** A slug usable as VDB name and file name. */
  slug: string;
  /** The document's text, unchanged. */
  text: string;
  document: OssieDocument;
  version: string | undefined;
  /** Undefined when it validates against Ossie's schema for its version; else why not. */
  schemaProblem: string | undefined;
}

const validators = new Map<string, (value: unknown) => string | undefined>();

/** The validation of a value against Ossie's JSON Schema of `version`: undefined when it fits, else the first problems. */
export function ossieSchemaProblem(version: string | undefined, value: unknown): string | undefined {
  const file = version === undefined ? undefined : SCHEMA_FILES[version];
  if (!file) return `no JSON Schema for document version ${String(version)}`;
  let validate = validators.get(file);
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const compiled = ajv.compile(JSON.parse(readFileSync(join(ossieRoot, file), 'utf8')) as object);
    validate = (candidate) => (compiled(candidate) ? undefined : (compiled.errors ?? []).slice(0, 3).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`).join('; '));
    validators.set(file, validate);
  }
  return validate(value);
}

function fixture(name: string, text: string): OssieFixture {
  const document = (yaml.load(text) ?? {}) as OssieDocument;
  const version = typeof document.version === 'string' ? document.version : undefined;
  const slug = name.replace(/^converters\//, '').replace(/\/(tests|src)\/.*\//, '-').replace(/^examples\//, 'examples-')
    .replace(/\.(yaml|ambr)(#|$)/, '$2').replace(/[^A-Za-z0-9]+/g, '-').toLowerCase().replace(/^-|-$/g, '');
  return { name, slug, text, document, version, schemaProblem: ossieSchemaProblem(version, document) };
}

/** Every public model: the document files, then the dbt snapshot's documents. */
export function ossieFixtures(): OssieFixture[] {
  const files = OSSIE_DOCUMENT_FILES.map((path) => fixture(path, readFileSync(join(ossieRoot, path), 'utf8')));
  const snapshot = readFileSync(join(ossieRoot, DBT_SNAPSHOT), 'utf8');
  const blocks = [...snapshot.matchAll(/^# name: (\S+)\n {2}'''\n([\s\S]*?)\n {2}'''$/gm)]
    .map((match) => fixture(`${DBT_SNAPSHOT}#${match[1]}`, `${(match[2] as string).split('\n').map((line) => line.slice(2)).join('\n')}\n`));
  return [...files, ...blocks];
}

/** `a.b.c` into its parts, quotes removed. */
function sourceParts(source: string): string[] {
  return source.split('.').map((part) => part.replace(/^"|"$/g, ''));
}

/** The SQL text of an expression the service would compile (OSI_SQL_2026, ANSI_SQL, then another SQL dialect). */
function expressionText(expression: OssieExpression | string): string | undefined {
  if (typeof expression === 'string') return expression;
  const order = ['ANSI_SQL', 'DATABRICKS', 'SNOWFLAKE', 'BIGQUERY'];
  return order.map((dialect) => expression.dialects.find((variant) => variant.dialect === dialect)).find((variant) => variant)?.expression;
}

/** The names an expression reads; none when it is no expression of the OSI language. */
function namesIn(text: string | undefined): string[][] {
  if (text === undefined) return [];
  try {
    return [...nodesOf(parseExpression(text, 'fixture'))].flatMap((node) => (node.kind === 'name' ? [node.parts] : []));
  } catch {
    return [];
  }
}

const SQL_TYPES: Record<string, string> = {
  String: 'text', Integer: 'integer', Decimal: 'numeric(12,2)', Float: 'double precision', Boolean: 'boolean',
  Date: 'date', Time: 'time', DateTime: 'timestamp', DateTimeTz: 'timestamptz',
};

interface Table {
  columns: Map<string, string>;
  keys: string[][];
}

/**
 * The PostgreSQL schema the models bind to: per `schema.relation` of their sources (schema `public` for a
 * source that names none), every column their keys, relationships, fields and metrics read, typed by the
 * field's `datatype` where it declares one (else numeric, and join columns of one type), with the keys the
 * models declare and the relationships' `to_columns` as unique keys. Names folded to lower case, as
 * unquoted names of PostgreSQL are.
 */
export async function ossieSchemaSql(fixtures: readonly OssieFixture[]): Promise<{ sql: string; schemas: string[]; databases: string[] }> {
  await loadModule();
  const tables = new Map<string, Table>();
  const databases = new Set<string>();
  for (const { document } of fixtures) {
    for (const model of document.semantic_model ?? []) {
      const tableOf = new Map<string, Table>();
      for (const dataset of model.datasets) {
        const parts = sourceParts(dataset.source).map((part) => part.toLowerCase());
        if (parts.length === 3) databases.add(parts[0] as string);
        const key = `${parts.at(-2) ?? 'public'}.${parts.at(-1)}`;
        let table = tables.get(key);
        if (!table) tables.set(key, (table = { columns: new Map(), keys: [] }));
        tableOf.set(dataset.name, table);
      }
      const typed = (table: Table | undefined, column: string, type?: string) => {
        if (!table) return;
        const name = column.toLowerCase();
        if (type !== undefined || !table.columns.has(name)) table.columns.set(name, type ?? table.columns.get(name) ?? 'numeric');
      };
      const addKey = (table: Table | undefined, key: string[]) => {
        const lower = key.map((column) => column.toLowerCase());
        if (table && !table.keys.some((known) => known.join() === lower.join())) table.keys.push(lower);
      };
      const metricNames = new Set((model.metrics ?? []).map((metric) => metric.name));
      const targets = new Set((model.relationships ?? []).map((relationship) => relationship.to));
      const facts = model.datasets.filter((dataset) => !targets.has(dataset.name));
      for (const dataset of model.datasets) {
        const table = tableOf.get(dataset.name);
        const fieldNames = new Set((dataset.fields ?? []).map((field) => field.name));
        for (const column of [...(dataset.primary_key ?? []), ...(dataset.unique_keys ?? []).flat()]) typed(table, column);
        if (dataset.primary_key) addKey(table, dataset.primary_key);
        for (const key of dataset.unique_keys ?? []) addKey(table, key);
        for (const field of dataset.fields ?? []) {
          const names = namesIn(expressionText(field.expression));
          const plain = names.length === 1 && names[0]?.length === 1;
          for (const parts of names) {
            if (parts.length === 1 && !(fieldNames.has(parts[0] as string) && parts[0] !== field.name)) typed(table, parts[0] as string, plain ? SQL_TYPES[field.datatype ?? ''] : undefined);
            if (parts.length === 2 && tableOf.has(parts[0] as string)) typed(tableOf.get(parts[0] as string), parts[1] as string);
          }
        }
      }
      for (const relationship of model.relationships ?? []) {
        const from = tableOf.get(relationship.from);
        const to = tableOf.get(relationship.to);
        relationship.from_columns.forEach((column, index) => {
          const other = relationship.to_columns[index] as string;
          const type = from?.columns.get(column.toLowerCase()) ?? to?.columns.get(other.toLowerCase());
          typed(from, column, type);
          typed(to, other, type);
        });
        addKey(to, relationship.to_columns);
      }
      for (const metric of model.metrics ?? []) {
        for (const parts of namesIn(expressionText(metric.expression))) {
          if (parts.length === 1 && !metricNames.has(parts[0] as string)) {
            const owner = model.datasets.find((dataset) => (dataset.fields ?? []).some((field) => field.name === parts[0])) ?? facts[0] ?? model.datasets[0];
            if (owner && !(owner.fields ?? []).some((field) => field.name === parts[0])) typed(tableOf.get(owner.name), parts[0] as string);
          }
          const dataset = parts.length === 2 ? model.datasets.find((candidate) => candidate.name === parts[0]) : undefined;
          if (dataset && !(dataset.fields ?? []).some((field) => field.name === parts[1])) typed(tableOf.get(dataset.name), parts[1] as string);
        }
      }
    }
  }
  const quote = (name: string) => `"${name}"`;
  const schemas = [...new Set([...tables.keys()].map((key) => key.split('.')[0] as string))].sort();
  const statements = schemas.filter((schema) => schema !== 'public').map((schema) => `create schema ${quote(schema)};`);
  for (const [key, table] of [...tables].sort(([a], [b]) => a.localeCompare(b))) {
    const [schema, name] = key.split('.') as [string, string];
    const keys = table.keys.filter((columns) => columns.every((column) => table.columns.has(column)));
    const constraints = keys.map((columns, index) => `${index === 0 ? 'primary key' : 'unique'} (${columns.map(quote).join(', ')})`);
    statements.push(`create table ${quote(schema)}.${quote(name)} (${[...[...table.columns].map(([column, type]) => `${quote(column)} ${type}`), ...constraints].join(', ')});`);
  }
  return { sql: `${statements.join('\n')}\n`, schemas, databases: [...databases].sort() };
}

/**
 * The files of a bundle serving each fixture as a VDB named by its slug (version 1) over `datasource`,
 * packaged as the service packages models: the document unchanged, a manifest with its digest, the VDB
 * file with the manifest's digest, the datasource's aliases for the databases the sources name and the
 * default schema of sources that name none.
 */
export function ossieBundleFiles(fixtures: readonly OssieFixture[], datasource: string, schemas: readonly string[], databases: readonly string[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const { slug, text } of fixtures) {
    const manifest = [
      `name: ${slug}`, 'version: 1.0.0', `namespace: ${slug.replace(/[^a-z0-9]/g, '_').replace(/^(\d)/, '_$1')}`, 'documents:',
      `  - { path: model.yaml, mediaType: application/vnd.osi+yaml, sha256: ${sha256Of(text)} }`,
    ].join('\n') + '\n';
    files[`semantic/${slug}/manifest.yaml`] = manifest;
    files[`semantic/${slug}/model.yaml`] = text;
    files[`vdbs/${slug}.yaml`] = [
      `name: ${slug}`, 'version: "1"', `datasource: ${datasource}`, 'schemas:', ...schemas.map((schema) => `  - { name: ${schema} }`), 'semantic:',
      '  defaultSchema: public',
      `  databaseAliases: { ${databases.map((database) => `${database}: ${datasource}`).join(', ')} }`,
      `  module: { uri: semantic/${slug}, name: ${slug}, version: 1.0.0, sha256: ${sha256Of(manifest)} }`,
    ].join('\n') + '\n';
  }
  return files;
}
