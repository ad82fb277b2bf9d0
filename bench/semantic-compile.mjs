// Compile time of a semantic query (docs/semantic-query.md) on the generated model of 1,000 datasets x 20
// fields (bench/generated-model.mjs): a metric of dataset_500 by fields of the four datasets it reaches
// many-to-one (dataset_499 ... dataset_496), with a where clause, a having clause and an order: 5 datasets.
// No database: the model is activated in memory, then the compiler runs on its package.
// - first: the first compile on the package (builds the name index);
// - warm: a new query text each time (another literal), so nothing comes from the statement cache;
// - cached: the same query again, answered from the statement cache per query shape.
// Runs on the compiled output: `npm run build && node bench/semantic-compile.mjs [datasets] [fields]`.
import { rmSync } from 'node:fs';
import { JoinPlanner } from '../dist/core/semantic-query/join-planner.js';
import { ModelIndex } from '../dist/core/semantic-query/model-index.js';
import { compileQuery } from '../dist/core/semantic-query/query-compiler.js';
import { libpgQueryGrammar } from '../dist/core/sql-grammar/libpg-query-grammar.js';
import { LruCache } from '../dist/core/caching/lru-cache.js';
import { generatedModel } from './generated-model.mjs';

const DATASETS = Number(process.argv[2] ?? 1_000);
const FIELDS = Number(process.argv[3] ?? 20);
const WARM_RUNS = 2_000;
const HOME = Math.floor(DATASETS / 2);

const { catalog, writeBundle, activate, dialect } = generatedModel(DATASETS, FIELDS);
const bundle = writeBundle('json');
const { package: pkg } = await activate(bundle, catalog());
rmSync(bundle.dir, { recursive: true, force: true });
await libpgQueryGrammar(dialect).load();

const query = (value) => ({
  dimensions: [1, 2, 3, 4].map((step) => ({ field: `dataset_${HOME - step}.measure_${FIELDS - 2}` })),
  measures: [{ metric: `metric_${HOME}` }, { expression: `COUNT(dataset_${HOME}.id)`, alias: 'rows' }],
  where: `dataset_${HOME - 4}.measure_${FIELDS - 3} > ${value} AND dataset_${HOME}.measure_2 IS NOT NULL`,
  having: `metric_${HOME} > 0`,
  orderBy: [{ field: `metric_${HOME}`, direction: 'desc' }],
  limit: 100,
});

let started = performance.now();
const model = new ModelIndex(pkg);
const planner = new JoinPlanner(model);
const plan = compileQuery(model, planner, dialect, query(0));
const first = performance.now() - started;

const times = [];
for (let run = 1; run <= WARM_RUNS; run++) {
  started = performance.now();
  compileQuery(model, planner, dialect, query(run));
  times.push(performance.now() - started);
}
const cache = new LruCache(500);
const key = JSON.stringify(query(0));
cache.set(key, plan);
started = performance.now();
for (let run = 0; run < WARM_RUNS; run++) cache.get(JSON.stringify(query(0)));
const cached = (performance.now() - started) / WARM_RUNS;

const sorted = [...times].sort((a, b) => a - b);
const at = (fraction) => sorted[Math.floor(sorted.length * fraction)];
console.log(`semantic compile: ${DATASETS} datasets x ${FIELDS} fields, a query over 5 datasets; node ${process.version}`);
console.log(`  first ${first.toFixed(2)} ms; warm (new text each time) median ${at(0.5).toFixed(3)} ms, p95 ${at(0.95).toFixed(3)} ms over ${WARM_RUNS}; cached ${cached.toFixed(4)} ms`);
console.log(`  ${plan.sql.length} characters of SQL, ${plan.params.length} bound values`);
