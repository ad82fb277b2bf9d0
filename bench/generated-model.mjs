// The generated semantic model of the semantic benches: DATASETS datasets x FIELDS fields, a chain of
// relationships (dataset_d -> dataset_{d-1}) and one metric per dataset (every tenth metric reads two
// datasets, so join paths are planned), over a generated catalog, written to a temp bundle and activated
// with the bundle provider. Runs on the compiled output.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { PostgresDialect } from '../dist/adapters/postgres/postgres-dialect.js';
import { activateVdb } from '../dist/core/semantic/vdb-activation.js';
import { bundleProvider } from '../dist/plugins/semantic-bundle/bundle-provider.js';

/** Datasets per document. */
export const PER_DOCUMENT = 100;
const sha = (text) => createHash('sha256').update(text).digest('hex');
/** The dialect of every expression: `BENCH_DIALECT=OSI_SQL_2026` has the service parse and write them anew (decision 32 of docs/semantic-query.md). */
const DIALECT = process.env.BENCH_DIALECT ?? 'ANSI_SQL';

export function generatedModel(DATASETS, FIELDS) {
  function catalog() {
    const relations = [];
    for (let d = 0; d < DATASETS; d++) {
      const columns = [{ name: 'id', nativeType: 'integer', logicalType: 'integer', nullable: false }];
      if (d > 0) columns.push({ name: 'parent_id', nativeType: 'integer', logicalType: 'integer', nullable: false });
      for (let f = columns.length; f < FIELDS; f++) columns.push({ name: `measure_${f}`, nativeType: 'numeric(12,2)', logicalType: 'decimal', nullable: true });
      relations.push({
        schema: 'bench', name: `table_${d}`, kind: 'table', columns, primaryKey: ['id'], uniqueKeys: [], datasource: 'bench_db',
        foreignKeys: d > 0 ? [{ name: `table_${d}_parent_fkey`, columns: ['parent_id'], referencedSchema: 'bench', referencedRelation: `table_${d - 1}`, referencedColumns: ['id'] }] : [],
      });
    }
    return { schemas: ['bench'], relations, functions: [] };
  }

  function model(first, count) {
    const datasets = [];
    const relationships = [];
    const metrics = [];
    for (let d = first; d < first + count; d++) {
      const fields = [{ name: 'id', expression: { dialects: [{ dialect: DIALECT, expression: 'id' }] }, logical_type: 'integer' }];
      if (d > 0) fields.push({ name: 'parent_id', expression: { dialects: [{ dialect: DIALECT, expression: 'parent_id' }] }, logical_type: 'integer' });
      for (let f = fields.length; f < FIELDS; f++) {
        fields.push({ name: `measure_${f}`, expression: { dialects: [{ dialect: DIALECT, expression: `measure_${f}` }] }, logical_type: 'decimal', description: `Measure ${f} of dataset ${d}` });
      }
      datasets.push({ name: `dataset_${d}`, source: `table_${d}`, primary_key: ['id'], description: `Dataset ${d}`, ai_context: { synonyms: [`entity ${d}`] }, fields });
      if (d > 0) relationships.push({ name: `dataset_${d}_to_parent`, from: `dataset_${d}`, to: `dataset_${d - 1}`, from_columns: ['parent_id'], to_columns: ['id'] });
      const expression = d > 0 && d % 10 === 0
        ? `SUM(dataset_${d}.measure_${FIELDS - 1}) / NULLIF(COUNT(DISTINCT dataset_${d - 1}.id), 0)`
        : `SUM(dataset_${d}.measure_${FIELDS - 1})`;
      metrics.push({ name: `metric_${d}`, expression: { dialects: [{ dialect: DIALECT, expression }] } });
    }
    return { namespace: 'bench', imports: [], binding: { schema: 'bench' }, semantic_model: [{ name: `part_${first}`, datasets, relationships, metrics }] };
  }

  /** Writes the module as documents of 100 datasets; all share one namespace, so relationships cross documents. */
  function writeBundle(syntax) {
    const dir = mkdtempSync(join(tmpdir(), `vdb-bench-${syntax}-`));
    const moduleDir = join(dir, 'semantic', 'bench');
    mkdirSync(moduleDir, { recursive: true });
    mkdirSync(join(dir, 'vdbs'));
    const documents = [];
    let bytes = 0;
    for (let first = 0; first < DATASETS; first += PER_DOCUMENT) {
      const value = model(first, Math.min(PER_DOCUMENT, DATASETS - first));
      const text = syntax === 'json' ? JSON.stringify(value) : stringify(value, { lineWidth: 0 });
      const path = `part-${String(first).padStart(5, '0')}.osi.${syntax}`;
      writeFileSync(join(moduleDir, path), text);
      bytes += text.length;
      documents.push({ path, mediaType: `application/vnd.osi+${syntax}`, sha256: sha(text) });
    }
    const manifest = stringify({ name: 'bench-semantic', version: '1.0.0', namespace: 'bench', documents });
    writeFileSync(join(moduleDir, 'manifest.yaml'), manifest);
    const file = join(dir, 'vdbs', 'bench.yaml');
    writeFileSync(file, 'name: bench\nversion: "1"\ndatasource: bench_db\nschemas: [{ name: bench }]\n');
    return { dir, file, bytes, manifestSha: sha(manifest) };
  }


  async function activate(bundle, vdbCatalog) {
    const vdb = {
      name: 'bench', version: '1', datasource: 'bench_db', schemas: [{ name: 'bench', datasource: 'bench_db' }], file: bundle.file,
      catalog: vdbCatalog, catalogRevision: 'sha256:bench',
      semantic: { enabled: true, module: { uri: 'semantic/bench', name: 'bench-semantic', version: '1.0.0', sha256: bundle.manifestSha } },
    };
    const started = performance.now();
    const activation = await activateVdb(vdb, {
      descriptors: bundle.dir, provider: () => provider, defaultPolicy: 'isolate', dialectOf: () => dialect, generation: 1,
    });
    const ms = performance.now() - started;
    if (activation.state !== 'active') throw new Error(`bench model did not activate: ${JSON.stringify(activation.diagnostics.slice(0, 3))}`);
    return { ms, packageBytes: activation.package.canonicalJson.length, package: activation.package.document };
  }

  const dialect = new PostgresDialect('postgres');
  const provider = bundleProvider('bundle');
  return { catalog, writeBundle, activate, dialect };
}
