import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { readYamlFile } from '../../core/config/yaml-source.js';
import type { CatalogColumn, LogicalType } from '../../core/plugin-api/catalog.js';
import type { ExpressionDialect, SemanticProvider } from '../../core/plugin-api/semantic-provider.js';
import type { ActivationDeps } from '../../core/semantic/vdb-activation.js';
import type { SemanticReference, VdbCatalog, VdbRelation, VirtualDatabase } from '../../core/plugin-api/vdb.js';
import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import { bundleProvider } from '../../plugins/semantic-bundle/bundle-provider.js';
import { catalogProvider } from '../../plugins/semantic-catalog/catalog-provider.js';
import { httpProvider } from '../../plugins/semantic-http/http-provider.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { sharedPglite } from './shared-pglite.js';
import { projectRoot } from './test-service.js';

export const fixturesRoot = join(projectRoot, 'test', 'fixtures', 'semantic');

export const postgresDialect: ExpressionDialect = new PostgresDialect('postgres');

function column(name: string, logicalType: LogicalType, nativeType: string, nullable = false): CatalogColumn {
  return { name, logicalType, nativeType, nullable };
}

function relation(name: string, kind: 'table' | 'view', columns: CatalogColumn[], keys: Partial<Pick<VdbRelation, 'primaryKey' | 'uniqueKeys' | 'foreignKeys'>> = {}): VdbRelation {
  return { schema: 'sales', name, kind, columns, primaryKey: [], uniqueKeys: [], foreignKeys: [], datasource: 'retail_db', ...keys };
}

/** The catalog descriptors/seed/retail.sql gives, as the PGlite adapter introspects it. */
export function retailCatalog(): VdbCatalog {
  const id = column('id', 'integer', 'integer');
  return {
    schemas: ['sales'],
    functions: [],
    relations: [
      relation('customers', 'table', [
        id, column('email', 'string', 'text'), column('name', 'string', 'text'), column('region', 'string', 'text'),
        column('created_at', 'timestamp', 'timestamp with time zone'),
      ], { primaryKey: ['id'], uniqueKeys: [['email']] }),
      relation('products', 'table', [
        id, column('sku', 'string', 'text'), column('name', 'string', 'text'), column('category', 'string', 'text'),
        column('unit_price', 'decimal', 'numeric(10,2)'), column('stock', 'integer', 'integer'), column('active', 'boolean', 'boolean'),
      ], { primaryKey: ['id'], uniqueKeys: [['sku']] }),
      relation('orders', 'table', [
        id, column('customer_id', 'integer', 'integer'), column('status', 'string', 'text'),
        column('ordered_at', 'timestamp', 'timestamp with time zone'), column('total', 'decimal', 'numeric(12,2)'), column('notes', 'json', 'jsonb', true),
      ], {
        primaryKey: ['id'],
        foreignKeys: [{ name: 'orders_customer_id_fkey', columns: ['customer_id'], referencedSchema: 'sales', referencedRelation: 'customers', referencedColumns: ['id'] }],
      }),
      relation('order_lines', 'table', [
        column('order_id', 'integer', 'integer'), column('line_no', 'integer', 'integer'), column('product_id', 'integer', 'integer'),
        column('quantity', 'integer', 'integer'), column('unit_price', 'decimal', 'numeric(10,2)'),
      ], {
        primaryKey: ['order_id', 'line_no'],
        foreignKeys: [
          { name: 'order_lines_order_id_fkey', columns: ['order_id'], referencedSchema: 'sales', referencedRelation: 'orders', referencedColumns: ['id'] },
          { name: 'order_lines_product_id_fkey', columns: ['product_id'], referencedSchema: 'sales', referencedRelation: 'products', referencedColumns: ['id'] },
        ],
      }),
      relation('customer_order_totals', 'view', [
        column('customer_id', 'integer', 'integer', true), column('name', 'string', 'text', true), column('region', 'string', 'text', true),
        column('order_count', 'integer', 'integer', true), column('revenue', 'decimal', 'numeric(12,2)', true),
      ]),
    ],
  };
}

/** A VDB as the loader gives it, from a VDB file of a bundle and the retail catalog. */
export function vdbFromFile(file: string, catalog: VdbCatalog = retailCatalog()): VirtualDatabase {
  const raw = readYamlFile(file).value as Omit<VirtualDatabase, 'file' | 'catalog' | 'catalogRevision' | 'schemas' | 'semantic'>
    & { schemas: { name: string }[]; semantic?: Omit<SemanticReference, 'enabled'> & { enabled?: boolean } };
  // The loader's schema defaults `enabled` to true.
  const semantic: SemanticReference | undefined = raw.semantic ? { ...raw.semantic, enabled: raw.semantic.enabled ?? true } : undefined;
  const { semantic: _written, ...definition } = raw;
  return {
    ...definition,
    ...(semantic ? { semantic } : {}),
    schemas: raw.schemas.map((schema) => ({ ...schema, datasource: raw.datasource })),
    file: resolve(file),
    catalog,
    catalogRevision: `sha256:${createHash('sha256').update(JSON.stringify(catalog)).digest('hex')}`,
  };
}

/** The three built-in providers, as their plugins register them (short HTTP limits for tests). */
export function testProviders(): Map<string, SemanticProvider> {
  return new Map<string, SemanticProvider>([
    ['bundle', bundleProvider('bundle', 64 * 1024)],
    ['http', httpProvider('http', { timeoutMs: 500, retries: 1, maxFileBytes: 64 * 1024 })],
    ['catalog', catalogProvider('catalog')],
  ]);
}

export function activationContext(descriptors: string, overrides: Partial<ActivationDeps> = {}): ActivationDeps {
  const providers = testProviders();
  return {
    descriptors,
    provider: (id) => providers.get(id),
    defaultPolicy: 'isolate',
    dialectOf: () => postgresDialect,
    federationDialectOf: () => postgresDialect,
    generation: 1,
    ...overrides,
  };
}

export function sha256Of(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface ModuleSpec {
  /** Document path -> text, listed in this order. */
  documents: Record<string, string>;
  mediaType?: string;
  namespace?: string;
  /** Extra lines of the VDB file's `semantic` section (e.g. `activationFailurePolicy: blockStartup`). */
  semanticLines?: string[];
  vdbName?: string;
  vdbVersion?: string;
}

/**
 * Writes a bundle of one VDB (`vdbs/<name>.yaml`) and one module (`semantic/<name>`) whose digests are
 * right: the files a test wants to activate, without a digest to compute by hand.
 */
export function moduleBundleFiles(spec: ModuleSpec): Record<string, string> {
  const name = spec.vdbName ?? 'shop';
  const version = spec.vdbVersion ?? '1';
  const manifest = [
    `name: ${name}-semantic`,
    'version: 1.0.0',
    `namespace: ${spec.namespace ?? name}`,
    'documents:',
    ...Object.entries(spec.documents).flatMap(([path, text]) => [
      `  - path: ${path}`, `    mediaType: ${spec.mediaType ?? 'application/vnd.osi+yaml'}`, `    sha256: ${sha256Of(text)}`,
    ]),
  ].join('\n') + '\n';
  const files: Record<string, string> = { [`semantic/${name}/manifest.yaml`]: manifest };
  for (const [path, text] of Object.entries(spec.documents)) files[`semantic/${name}/${path}`] = text;
  files[`vdbs/${name}-${version}.yaml`] = [
    `name: ${name}`, `version: "${version}"`, 'datasource: retail_db', 'schemas:', '  - { name: sales }', 'semantic:',
    ...(spec.semanticLines ?? []).map((line) => `  ${line}`),
    `  module: { uri: semantic/${name}, name: ${name}-semantic, version: 1.0.0, sha256: ${sha256Of(manifest)} }`,
  ].join('\n') + '\n';
  return files;
}

/** Writes files under a fresh temp folder; returns the folder. */
export function writeTempBundle(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'vdb-semantic-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** The `shop` model the diagnostic fixtures start from (test/fixtures/semantic/cases/valid). */
export function shopDocument(): string {
  return readFileSync(join(fixturesRoot, 'cases', 'valid', 'semantic', 'shop', 'shop.osi.yaml'), 'utf8');
}

/** The process's shared PGlite, which holds the retail demo. */
export function seededRetail(): Promise<Datasource> {
  return sharedPglite();
}
