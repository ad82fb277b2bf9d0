import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

/** The project root (tests run from dist/test/docs). */
const root = fileURLToPath(new URL('../../../', import.meta.url));

function sourceFiles(folder: string): string[] {
  const full = join(root, folder);
  if (!existsSync(full)) return [];
  return readdirSync(full).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = ['core', 'plugins', 'adapters'].flatMap(sourceFiles);
const known = new Set(files);

/** Every relative import or re-export of a file, type-only ones included, as project paths of .ts files. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g)) {
    const target = relative(root, resolve(root, dirname(file), match[1] as string)).replace(/\.js$/, '.ts');
    if (known.has(target)) targets.push(target);
  }
  return targets;
}

const graph = new Map(files.map((file) => [file, importsOf(file)]));

/** One import cycle as a path of files, or undefined when the graph has none. */
function findCycle(): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of files) {
    if (state.has(file)) continue;
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

const rules = suite('the import rules of docs/architecture.md');

rules('the source has files to check', () => {
  assert.ok(files.length > 100, `only ${files.length} source files found under ${root}`);
  assert.ok((graph.get('core/service.ts') ?? []).length > 5);
});

rules('no import cycle, type imports included', () => {
  const cycle = findCycle();
  assert.is(cycle, undefined, `import cycle: ${(cycle ?? []).join(' -> ')}`);
});

/** The two public entries of the plugin API: `vdb-service/plugin-api` and `vdb-service/adapter-kit`. */
const FACADES = new Set(['core/plugin-api/index.ts', 'core/plugin-api/adapter-kit.ts']);

rules('plugins reach the core only through core/plugin-api/index.ts, adapters through core/plugin-api/adapter-kit.ts', () => {
  const around = files
    .filter((file) => /^(plugins|adapters)\//.test(file))
    .flatMap((file) => {
      const entry = file.startsWith('adapters/') ? 'core/plugin-api/adapter-kit.ts' : 'core/plugin-api/index.ts';
      return (graph.get(file) ?? []).filter((target) => target.startsWith('core/') && target !== entry).map((target) => `${file} -> ${target}`);
    });
  assert.equal(around, []);
});

rules('the plugin API contracts import nothing of the core outside core/plugin-api/', () => {
  const outside = files
    .filter((file) => file.startsWith('core/plugin-api/') && !FACADES.has(file))
    .flatMap((file) => (graph.get(file) ?? []).filter((target) => !target.startsWith('core/plugin-api/')).map((target) => `${file} -> ${target}`));
  assert.equal(outside, []);
});

rules('statement deadlines are armed by the runtime seam: no adapter arms its own timer', () => {
  // core/sql/datasource-runtime.ts arms one deadline per statement and aborts the adapter's `deadline` signal
  const arming = files.filter((file) => /\barmDeadline\b|new StatementDeadline\(/.test(readFileSync(join(root, file), 'utf8')));
  // besides the seam, only the kit's check at open, before any runtime exists (KnexDatasource.verified)
  assert.equal(arming, ['core/sql/datasource-runtime.ts', 'core/sql/knex-datasource.ts']);
});

rules('the core imports no plugin or adapter, and no core file but a plugin imports a facade', () => {
  const wrong = files
    .filter((file) => file.startsWith('core/') && !FACADES.has(file))
    .flatMap((file) => (graph.get(file) ?? [])
      .filter((target) => /^(plugins|adapters)\//.test(target) || FACADES.has(target))
      .map((target) => `${file} -> ${target}`));
  assert.equal(wrong, []);
});

/**
 * The layers of docs/architecture.md, top first: each line of its diagram, as the folders (`core/sql/`) and
 * files (`core/cli.ts`) it names.
 */
function documentedLayers(): string[][] {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const diagram = /## Layers[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  return diagram.split('\n')
    .filter((line) => line.startsWith('core/'))
    .map((line) => [...line.matchAll(/core\/(?:[\w-]+\/|[\w-]+\.ts)/g)].map((match) => match[0]));
}

const layers = documentedLayers();
/** The rank of a file's folder (or top-level file) in the diagram, 0 the lowest; undefined for a file it does not place. */
function layerOf(file: string): number | undefined {
  const place = /^core\/[\w-]+\//.exec(file)?.[0] ?? file;
  const index = layers.findIndex((line) => line.includes(place));
  return index < 0 ? undefined : layers.length - 1 - index;
}

rules('the layer order of docs/architecture.md: a core file imports only its own folder and the lines below it', () => {
  assert.ok(layers.length > 8, `the diagram of docs/architecture.md has ${layers.length} lines of core folders`);
  const upward = files
    // the facades re-export the helpers of the layers above it, for plugins only
    .filter((file) => file.startsWith('core/') && !FACADES.has(file))
    .flatMap((file) => {
      const own = layerOf(file);
      const folder = /^core\/[\w-]+\//.exec(file)?.[0];
      if (own === undefined) return [];
      return (graph.get(file) ?? []).filter((target) => {
        const rank = layerOf(target);
        return rank !== undefined && !(folder !== undefined && target.startsWith(folder)) && rank >= own;
      }).map((target) => `${file} -> ${target}`);
    });
  assert.equal(upward, []);
});

rules.run();

const words = suite('one word per thing (docs/glossary.md)');

// this file names the retired words to refuse them
const sources = [...files, ...['test'].flatMap(sourceFiles)].filter((file) => file !== 'test/docs/architecture.test.ts');
/** A file's text without its comments, where identifiers are checked. */
function codeOf(file: string): string {
  return readFileSync(join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

words('the source has files and the glossary retires words', () => {
  assert.ok(sources.length > 200, `only ${sources.length} source files found under ${root}`);
  assert.ok(readFileSync(join(root, 'docs/glossary.md'), 'utf8').includes('## Words not used'));
});

words('a VDB handle is a handle: no identifier `bound` for one, no bind() that looks one up', () => {
  const found = sources.flatMap((file) => {
    const code = codeOf(file);
    return [/\bbound\s*[:?]\s*(?:Pick<\s*)?VdbHandle\b/, /\.bound\.(?:vdb|dialect|datasource|relation)\b/, /\bendpoint\.bound\b/, /\bbind\(\s*(?:call\.)?vdb\b/]
      .filter((pattern) => pattern.test(code)).map((pattern) => `${file}: ${pattern.source}`);
  });
  assert.equal(found, []);
});

/** Identifiers that named a second meaning of a word, each retired for the name docs/glossary.md gives. */
const RETIRED_IDENTIFIERS = [
  'guardDatasource', 'sqlBinding', 'BindingExecutor', 'RenderSession', 'ReadContext', 'SessionContext',
  'ActivationContext', 'BindingContext', 'JoinContext', 'ActionContext',
];

words('retired identifiers do not come back', () => {
  const found = sources.flatMap((file) => {
    const code = codeOf(file);
    return RETIRED_IDENTIFIERS.filter((name) => new RegExp(`\\b${name}\\b`).test(code)).map((name) => `${file}: ${name}`);
  });
  assert.equal(found, []);
});

/** File names that named a second meaning of a word (or code that is gone). */
const RETIRED_FILE_WORDS = /(?:^|-)(?:guarded|binding-values|diagnostic-catalog|render-session|statement-names|sql-failure|observed-datasource|guarded-datasource)(?:-|\.)/;

words('no source file is named with a retired word', () => {
  const named = sources.map((file) => file.split('/').pop() as string).filter((name) => RETIRED_FILE_WORDS.test(name));
  assert.equal(named, []);
});

words.run();
