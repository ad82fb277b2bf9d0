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

/** Ossie's datatype as a PostgreSQL type; `numeric` where a model declares none. */
const SQL_TYPES: Record<string, string> = {
  String: 'text', Integer: 'integer', Decimal: 'numeric(12,2)', Float: 'double precision', Boolean: 'boolean',
  Date: 'date', Time: 'time', DateTime: 'timestamp', DateTimeTz: 'timestamptz',
};

/** The same types on MySQL and MariaDB. */
const MYSQL_TYPES: Record<string, string> = {
  text: 'varchar(60)', integer: 'int', 'numeric(12,2)': 'decimal(12,2)', numeric: 'decimal(12,2)', 'double precision': 'double',
  boolean: 'boolean', date: 'date', time: 'time', timestamp: 'datetime', timestamptz: 'datetime',
};

export interface GeneratedTable {
  schema: string;
  name: string;
  /** Column -> PostgreSQL type, in the order the models first name them. */
  columns: Map<string, string>;
  keys: string[][];
  /** Columns that are a relationship's from_columns: the table (`schema.name`) their values point into. */
  references: Map<string, string>;
  /** Whether a relationship points at it (a dimension: fewer rows). */
  referenced: boolean;
}

export interface GeneratedSchema {
  tables: GeneratedTable[];
  /** The schemas holding them (MySQL: databases). */
  schemas: string[];
  /** The first parts of three-part sources, folded: the names the VDB file aliases to its datasource. */
  databases: string[];
}

/**
 * The schema the models bind to: per `schema.relation` of their sources (schema `public` for a source that
 * names none), every column their keys, relationships, fields and metrics read, typed by the field's
 * `datatype` where it declares one (else numeric, and join columns of one type), with the keys the models
 * declare and the relationships' `to_columns` as unique keys. Names folded to lower case, as unquoted names
 * of PostgreSQL are.
 */
export async function ossieSchema(fixtures: readonly OssieFixture[]): Promise<GeneratedSchema> {
  await loadModule();
  const tables = new Map<string, GeneratedTable>();
  const databases = new Set<string>();
  for (const { document } of fixtures) {
    for (const model of document.semantic_model ?? []) {
      const tableOf = new Map<string, GeneratedTable>();
      for (const dataset of model.datasets) {
        const parts = sourceParts(dataset.source).map((part) => part.toLowerCase());
        if (parts.length === 3) databases.add(parts[0] as string);
        const schema = parts.at(-2) ?? 'public';
        const name = parts.at(-1) as string;
        let table = tables.get(`${schema}.${name}`);
        if (!table) tables.set(`${schema}.${name}`, (table = { schema, name, columns: new Map(), keys: [], references: new Map(), referenced: false }));
        tableOf.set(dataset.name, table);
      }
      const typed = (table: GeneratedTable | undefined, column: string, type?: string) => {
        if (!table) return;
        const name = column.toLowerCase();
        if (type !== undefined || !table.columns.has(name)) table.columns.set(name, type ?? table.columns.get(name) ?? 'numeric');
      };
      const addKey = (table: GeneratedTable | undefined, key: string[]) => {
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
          if (from && to && from !== to) from.references.set(column.toLowerCase(), `${to.schema}.${to.name}`);
        });
        if (to) to.referenced = true;
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
  const sorted = [...tables.values()].sort((a, b) => `${a.schema}.${a.name}`.localeCompare(`${b.schema}.${b.name}`));
  return { tables: sorted, schemas: [...new Set(sorted.map((table) => table.schema))].sort(), databases: [...databases].sort() };
}

export type SqlFamily = 'postgres' | 'mysql';

function quoted(family: SqlFamily, name: string): string {
  return family === 'mysql' ? `\`${name}\`` : `"${name}"`;
}

/** `create schema if not exists` (MySQL: `create database`: a schema is a database there) for the schemas but PostgreSQL's public. */
export function namespaceStatements(schema: GeneratedSchema, family: SqlFamily): string[] {
  return schema.schemas.filter((name) => family === 'mysql' || name !== 'public').map((name) => `create ${family === 'mysql' ? 'database' : 'schema'} if not exists ${quoted(family, name)}`);
}

/** `create table` of each generated table, with its keys. */
export function schemaStatements(schema: GeneratedSchema, family: SqlFamily): string[] {
  const q = (name: string) => quoted(family, name);
  const statements: string[] = [];
  for (const table of schema.tables) {
    const keys = table.keys.filter((columns) => columns.every((column) => table.columns.has(column)));
    const constraints = keys.map((columns, index) => `${index === 0 ? 'primary key' : 'unique'} (${columns.map(q).join(', ')})`);
    const columns = [...table.columns].map(([column, type]) => `${q(column)} ${family === 'mysql' ? MYSQL_TYPES[type] ?? type : type}`);
    statements.push(`create table ${q(table.schema)}.${q(table.name)} (${[...columns, ...constraints].join(', ')})`);
  }
  return statements;
}

/** Drops the generated tables, where they exist (a run that failed half way leaves them). */
export function dropStatements(schema: GeneratedSchema, family: SqlFamily): string[] {
  return schema.tables.map((table) => `drop table if exists ${quoted(family, table.schema)}.${quoted(family, table.name)}`);
}

/** Rows of a table: dimensions (pointed at by a relationship) get fewer rows than facts. */
export function rowCount(table: GeneratedTable): number {
  return table.referenced ? 6 : 24;
}

/**
 * Deterministic rows: a key column counts 1, 2, …; a reference column points at a row of its table, at
 * none every 7th row (an orphan) and, outside a key, is NULL every 10th (both fall in a NULL group); numbers are small
 * integers, text `s0`…`s3`, dates days of January 2024.
 */
export function dataStatements(schema: GeneratedSchema, family: SqlFamily): string[] {
  const q = (name: string) => quoted(family, name);
  const byKey = new Map(schema.tables.map((table) => [`${table.schema}.${table.name}`, table]));
  return schema.tables.map((table) => {
    // A one-column key counts; of a composite key, the columns that point nowhere do.
    const keyColumns = new Set(table.keys.flatMap((key) => (key.length === 1 ? key : key.filter((column) => !table.references.has(column)))));
    const rows = Array.from({ length: rowCount(table) }, (_, i) => [...table.columns].map(([column, type], j) => {
      if (keyColumns.has(column)) return type === 'text' ? `'k${i + 1}'` : type === 'date' ? `'2024-01-${String(1 + (i % 28)).padStart(2, '0')}'` : String(i + 1);
      const target = table.references.get(column);
      if (target !== undefined) {
        if (i % 10 === 9 && !table.keys.some((key) => key.includes(column))) return 'null';
        const size = rowCount(byKey.get(target) as GeneratedTable);
        const value = i % 7 === 6 ? size + 1 : ((i * 5 + j) % size) + 1;
        return type === 'text' ? `'k${value}'` : String(value);
      }
      const n = ((i * 13 + j * 7) % 17) + 1;
      if (type === 'text') return `'s${(i + j) % 4}'`;
      if (type === 'date') return `'2024-01-${String(1 + ((i + j) % 28)).padStart(2, '0')}'`;
      if (type === 'boolean') return n % 2 === 0 ? 'true' : 'false';
      if (type === 'time' || type === 'timestamp' || type === 'timestamptz') return type === 'time' ? `'10:${String(n).padStart(2, '0')}:00'` : `'2024-01-${String(n).padStart(2, '0')} 10:00:00'`;
      return String(n);
    }).join(', '));
    return `insert into ${q(table.schema)}.${q(table.name)} (${[...table.columns.keys()].map(q).join(', ')}) values ${rows.map((row) => `(${row})`).join(', ')}`;
  });
}

/**
 * The files of a bundle serving each fixture as a VDB named by its slug (version 1) over `datasource`,
 * packaged as the service packages models: the document unchanged, a manifest with its digest, the VDB
 * file with the manifest's digest, the datasource's aliases for the databases the sources name and the
 * default schema of sources that name none.
 */
export function ossieBundleFiles(fixtures: readonly OssieFixture[], datasource: string, { schemas, databases }: Pick<GeneratedSchema, 'schemas' | 'databases'>): Record<string, string> {
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
