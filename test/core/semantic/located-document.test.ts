import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect, isDeepStrictEqual } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { parseYamlText } from '../../../core/config/yaml-source.js';
import { StartupError } from '../../../core/plugin-api/errors.js';
import { parseModuleText, type ParseOutcome } from '../../../core/semantic/located-document.js';
import { readYamlValue } from '../../../core/semantic/yaml-value-reader.js';
import { demoDescriptors } from '../../support/test-service.js';
import { fixturesRoot } from '../../support/semantic-test-support.js';

const documents = suite('module documents: js-yaml values, kernel locations');
const bytes = (text: string) => new TextEncoder().encode(text);

/** What the kernel's parser (the `yaml` package, core schema, bounded aliases) makes of a text. */
function kernel(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: parseYamlText(text, 'doc.yaml').value };
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    return { ok: false, message: error.message };
  }
}

/** Asserts that js-yaml read the text (no fallback) and gave exactly the kernel's value (NaN, -0 and key order included). */
function assertFastAndEqual(text: string, label = text): unknown {
  const fast = readYamlValue(text);
  const expected = kernel(text);
  assert.ok(fast, `js-yaml should read ${JSON.stringify(label)}`);
  assert.ok(expected.ok, `the kernel should read ${JSON.stringify(label)}`);
  assert.ok(isDeepStrictEqual(fast.value, expected.value), `${JSON.stringify(label)}: js-yaml ${inspect(fast.value)}, kernel ${inspect(expected.value)}`);
  return fast.value;
}

/** The kernel warns through process.emitWarning when it turns a collection key into a string: expected here. */
function quietly<T>(run: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return run();
  } finally {
    process.emitWarning = emitWarning;
  }
}

function yamlFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => /\.ya?ml$/.test(file)).map((file) => join(root, file)).sort();
}

documents('the demo modules are read by js-yaml, with the values the kernel gives them', () => {
  const files = yamlFiles(join(demoDescriptors, 'semantic'));
  assert.ok(files.length >= 4, 'demo modules and their manifests');
  for (const file of files) assertFastAndEqual(readFileSync(file, 'utf8'), file);
});

documents('every semantic fixture gets the kernel value, or is refused by both parsers', () => {
  let fast = 0;
  for (const file of yamlFiles(fixturesRoot)) {
    const text = readFileSync(file, 'utf8');
    const read = readYamlValue(text);
    const expected = kernel(text);
    if (!expected.ok) {
      assert.is(read, undefined, `${file}: the kernel refuses it (${expected.message}), so js-yaml must leave it to the kernel`);
      continue;
    }
    if (read) {
      fast++;
      assert.ok(isDeepStrictEqual(read.value, expected.value), file);
    }
  }
  assert.ok(fast > 100, `most fixtures take the fast path (${fast})`);
});

documents('plain scalars resolve as in the kernel: YAML 1.2 core, no YAML 1.1 booleans, no timestamps', () => {
  const scalars = [
    '~', 'null', 'Null', 'NULL', 'nULL', '', 'true', 'True', 'TRUE', 'tRUE', 'false', 'False', 'FALSE',
    'yes', 'no', 'on', 'off', 'y', 'n', 'Yes', 'NO',
    '0', '-0', '+0', '007', '-12', '+12', '0o17', '0o18', '-0o17', '0x1F', '0x1f', '0X1F', '0x1g', '-0x1F', '+0x1F',
    '0b101', '1_000', '1,000', '9007199254740993', '9'.repeat(400),
    '1.0', '1.', '.5', '-.5', '+.5', '1.50', '1.5e3', '1e3', '1E-3', '.5e3', '1.e3', '-1e400', '1e400', '1e', 'e3',
    '.inf', '-.Inf', '+.INF', '.nan', '.NaN', '.NAN', '-.nan', '+.nan', '.Nan', 'inf', 'NaN', 'Infinity',
    '2001-12-14', '2001-12-14t21:59:43.10-05:00', '12:30:45', '1:20', '0.1.2', '0x', '0o', '+', '.', '-1-',
  ];
  for (const scalar of scalars) assertFastAndEqual(`value: ${scalar}\n`);
  const read = (scalar: string) => (readYamlValue(`v: ${scalar}`)?.value as { v: unknown }).v;
  assert.is(read('yes'), 'yes');
  assert.is(read('on'), 'on');
  assert.is(read('1.0'), 1);
  assert.is(read('0o17'), 15);
  assert.is(read('0x1F'), 31);
  assert.is(read('0b101'), '0b101');
  assert.is(read('1_000'), '1_000');
  assert.is(read('-.5'), -0.5);
  assert.is(read('2001-12-14'), '2001-12-14');
  assert.ok(Number.isNaN(read('.nan')));
  assert.ok(Object.is(read('-0'), -0));
  assert.is(read('1e400'), Number.POSITIVE_INFINITY);
});

documents('text forms read as in the kernel: block scalars, folding, escapes, flow collections, keys, comments', () => {
  const forms = [
    'folded: >\n  one\n  two\n\n  para\nliteral: |\n  a\n    b\n  c\nkeep: |+\n  kept\n\nstrip: >-\n  stripped\nindented: |2\n    two\n   one\n',
    'double: "a \\"b\\" \\t \\u00e9 \\x41 \\U0001F600 \\N \\_ \\L \\P \\0 \\/ \\\\ \\\n  joined"\nsingle: \'it\'\'s\n  folded\n\n  para\'\n',
    'plain: a plain\n  multi-line\n\n  scalar\nquoted: "line\n  two"\n',
    'flow: {a: 1, "b": [x, y], \'c\': {d: e}, f: [], g: {}}\nmulti: [one,\n  two]\nmap: {a: 1,\n  b: 2}\njson: {"k":"v"}\n',
    'seq:\n  - a\n  - - nested\n    - list\n  - key: value\n    other: [1, 2]\n',
    '"quoted key": 1\n\'single key\': 2\nkey with spaces: 3\n123: number\ntrue: bool\n1.5: float\n0x10: hex\n',
    '__proto__: {polluted: true}\n<<: {merge: no}\nconstructor: c\ntoString: t\n',
    'url: http://example.com/a#b\nhash: a#b\nsql: SELECT a, b FROM t WHERE x = \'y\' AND z > 1 # comment\nstar: count(*)\n',
    'crlf: 1\r\nlist:\r\n  - a\r\n  - "b\r\n    c"\r\n',
    'empty:\ntrailing: value   \ntab:\tvalue\nunicode: "😀 ☃" \n',
    '--- \na: 1\n...\n',
    '# only a comment\n',
    '',
    '[a, b]\n',
    'just text\n',
  ];
  for (const form of forms) assertFastAndEqual(form);
  assert.is(readYamlValue('')?.value, null, 'an empty document is null, as in the kernel');
  assert.equal(readYamlValue('__proto__: {polluted: true}\n')?.value, JSON.parse('{"__proto__": {"polluted": true}}'));
  assert.is(({} as Record<string, unknown>)['polluted'], undefined);
});

documents('generated models take the fast path, whatever the writer folds', () => {
  const model = {
    namespace: 'bench',
    semantic_model: [{
      name: 'part',
      datasets: Array.from({ length: 20 }, (_, d) => ({
        name: `dataset_${d}`, source: `table_${d}`, primary_key: ['id'], description: `Dataset ${d} `.repeat(20),
        fields: [{ name: 'id', expression: { dialects: [{ dialect: 'ANSI_SQL', expression: `CASE WHEN id > ${d} THEN 'a: b' ELSE "c" END` }] } }],
      })),
    }],
  };
  for (const options of [{ lineWidth: 0 }, {}, { defaultStringType: 'QUOTE_DOUBLE' as const }]) {
    const value = assertFastAndEqual(stringify(model, options), JSON.stringify(options));
    assert.equal(value, model);
  }
});

documents('syntax the kernel bounds or reads differently is left to the kernel, with the kernel result', () => {
  const kernelOnly = [
    'a: &x 1\nb: *x\n', '- &x [1]\n- *x\n', '{a: &x 1, b: *x}\n', '[&x 1, *x]\n', '{"a":&x 1, "b": *x}\n', '&x a: 1\n',
    '--- &x\na: 1\n', 'a: !!str &x 1\nb: *x\n',
    'a: !!str 1\n', 'a: !!float 1\n', 'a: !!int 1.5\n', '!!map {a: 1}\n', 'a: !<tag:yaml.org,2002:str> 1\n', 'a: !local x\n',
    '%YAML 1.2\n---\na: 1\n', '%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n',
    '~: 1\n', 'null: 1\n', 'NULL: 1\n', '{~: 1}\n', '{: 1}\n', '[null: 1]\n', ': x\n', '!!null "": x\n',
    '? a\n: 1\n', '? [a, b]\n: 1\n', '[a, b]: 1\n', '{a: 1}: 2\n', '{[a]:1}\n', 'k: {? a : 1}\n', '{ x: 1, [a] }\n', '{ d: , [a] }\n',
    'a: "x"#c\n', 'a: [x,#c\n  y]\n', 'a: {b: 1,#c\n  d: 2}\n',
    'q: "a\\\n\n  b"\n', 'q: "a \\\n \n  b"\n',
    'seq:\n  - a\n  -\n - b\n', 'seq:\n  - a\n  - # empty\n',
    'a:\n  x: {p: 1,\n  q: 2}\n', 'a:\n  x: "abc\n  y: 3"\n', 'x: [a,\nb]\n',
    'a: 1\n---\nb: 2\n', 'a: 1\na: 2\n', '1: a\n"1": b\n', '.nan: a\n.NaN: b\n',
  ];
  for (const text of kernelOnly) {
    assert.is(readYamlValue(text), undefined, JSON.stringify(text));
    const outcome = quietly(() => parseModuleText(bytes(text), 'yaml', 'doc.yaml'));
    const expected = quietly(() => kernel(text));
    assert.is(outcome.ok, expected.ok, JSON.stringify(text));
    if (outcome.ok && expected.ok) assert.ok(isDeepStrictEqual(outcome.document.value, expected.value), JSON.stringify(text));
  }
  const value = (text: string) => quietly(() => parseModuleText(bytes(text), 'yaml', 'doc.yaml') as Extract<ParseOutcome, { ok: true }>).document.value;
  assert.equal(value('~: 1\n'), { '': 1 });
  assert.equal(value('[a, b]: 1\n'), { '[ a, b ]': 1 });
  assert.equal(value('a: &x [1]\nb: *x\n'), { a: [1], b: [1] });
  assert.equal(value('a: !!float 1\n'), { a: '1' });
});

documents('an alias bomb is refused by the kernel bound, as before', () => {
  let text = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let level = 1; level < 9; level++) text += `a${level}: &a${level} [${Array(10).fill(`*a${level - 1}`).join(', ')}]\n`;
  const outcome = parseModuleText(bytes(text), 'yaml', 'bomb.yaml');
  assert.equal(outcome, { ok: false, message: 'invalid YAML: Excessive alias count indicates a resource exhaustion attack', location: { line: 1, column: 1 } });
});

documents('syntax errors keep the kernel message, line and column', () => {
  const errors: [string, string, number, number][] = [
    ['a: 1\nb: 2\na: 3\n', 'invalid YAML: Map keys must be unique', 3, 1],
    ['a:\n  b: 1\n c: 2\n', 'invalid YAML: All mapping items must start at the same column', 3, 1],
    ['a: [1, 2\n', 'invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]', 2, 1],
    ['a:\n  x: {p: 1,\n  q: 2}\n', 'invalid YAML: Flow map in block collection must be sufficiently indented and end with a }', 3, 3],
    ['a: "x"#c\n', 'invalid YAML: Comments must be separated from other tokens by white space characters', 1, 7],
    ['a:\n\t- b\n', 'invalid YAML: Tabs are not allowed as indentation', 2, 1],
    ['a: @b\n', 'invalid YAML: Plain value cannot start with reserved character @', 1, 4],
    ["a: 'x\n", "invalid YAML: Missing closing 'quote", 2, 1],
    ['a: 1\n---\nb: 2\n', 'invalid YAML: Source contains multiple documents; please use YAML.parseAllDocuments()', 2, 1],
  ];
  for (const [text, message, line, column] of errors) {
    assert.equal(parseModuleText(bytes(text), 'yaml', 'doc.yaml'), { ok: false, message, location: { line, column } }, JSON.stringify(text));
  }
});

documents('locations come from the kernel when asked, identical to a kernel parse', () => {
  const text = readFileSync(join(demoDescriptors, 'semantic', 'retail', 'sales.osi.yaml'), 'utf8');
  const outcome = parseModuleText(bytes(text), 'yaml', 'sales.osi.yaml');
  assert.ok(outcome.ok);
  const source = parseYamlText(text, 'sales.osi.yaml');
  const paths: (string | number)[][] = [[], ['namespace'], ['semantic_model', 0, 'datasets', 1, 'fields', 0, 'name'], ['semantic_model', 0, 'metrics', 0],
    ['semantic_model', 0, 'datasets', 0, 'no_such_key'], ['semantic_model', 9]];
  for (const path of paths) assert.equal(outcome.document.locate(path), source.locate(path), path.join('/'));
});

documents('a document the fast parser took but the kernel refuses locates at its start instead of throwing', () => {
  const outcome = parseModuleText(bytes('{"a": 1, "a": 2}'), 'json', 'doc.json');
  assert.ok(outcome.ok);
  assert.equal(outcome.document.value, { a: 2 });
  assert.equal(outcome.document.locate(['a']), { line: 1, column: 1 });
});

documents('UTF-8 only; a byte order mark is dropped', () => {
  const withBom = parseModuleText(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('a: 1\nb: [x]\n')]), 'yaml', 'doc.yaml');
  assert.ok(withBom.ok);
  assert.equal(withBom.document.value, { a: 1, b: ['x'] });
  assert.equal(withBom.document.locate(['b']), { line: 2, column: 4 });
  assert.equal(parseModuleText(new Uint8Array([0x61, 0x3a, 0x20, 0xff]), 'yaml', 'doc.yaml'),
    { ok: false, message: 'the file is not UTF-8 text', location: { line: 1, column: 1 } });
});

documents.run();
