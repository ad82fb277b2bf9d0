// Activation time of a generated semantic model: 1,000 datasets x 20 fields, one relationship and one
// metric per dataset (every tenth metric reads two datasets, so join paths are planned), over a generated
// catalog. No database: the catalog is built in memory, the module is written to a temp bundle and read by
// the bundle provider, so the time covers acquisition (digests, parsing, schema check), resolution,
// binding, expression parsing, compilation and the canonical package with its digest.
// Runs on the compiled output: `npm run build && node bench/semantic-activation.mjs [datasets] [fields]`.
// BENCH_SYNTAX=yaml (or json) measures one syntax only, so its first activation is the first in the process.
import { rmSync } from 'node:fs';
import { generatedModel, PER_DOCUMENT } from './generated-model.mjs';

const DATASETS = Number(process.argv[2] ?? 1_000);
const FIELDS = Number(process.argv[3] ?? 20);
const RUNS = 5;
const SYNTAXES = (process.env.BENCH_SYNTAX ?? 'json,yaml').split(',');

const { catalog, writeBundle, activate } = generatedModel(DATASETS, FIELDS);
const vdbCatalog = catalog();
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`semantic activation: ${DATASETS} datasets x ${FIELDS} fields, ${DATASETS - 1} relationships, ${DATASETS} metrics; node ${process.version}`);
for (const syntax of SYNTAXES) {
  const bundle = writeBundle(syntax);
  const first = await activate(bundle, vdbCatalog);
  const runs = [];
  for (let run = 0; run < RUNS; run++) runs.push((await activate(bundle, vdbCatalog)).ms);
  console.log(`  ${syntax.padEnd(4)} documents (${(bundle.bytes / 1e6).toFixed(1)} MB in ${Math.ceil(DATASETS / PER_DOCUMENT)} files, package ${(first.packageBytes / 1e6).toFixed(1)} MB): `
    + `first ${first.ms.toFixed(0)} ms, median of ${RUNS} ${median(runs).toFixed(0)} ms (min ${Math.min(...runs).toFixed(0)}, max ${Math.max(...runs).toFixed(0)})`);
  rmSync(bundle.dir, { recursive: true, force: true });
}
