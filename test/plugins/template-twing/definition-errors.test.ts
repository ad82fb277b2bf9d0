import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DefinitionError } from '../../../core/endpoints/definition-error.js';
import { compile, definitionErrorOf, fieldsOf, render } from './template-support.js';

const errors = suite('definition errors name the file line');

errors('a syntax error in the body counts header lines', () => {
  const source = "{% set a = 1 %}\n{% set b = 2 %}\n---\ntype: sqlDirect\nquery: select {{ a | nope }}\n";
  const error = definitionErrorOf(() => compile(source, 'defs/broken.yaml'));
  assert.is(error.file, 'defs/broken.yaml');
  assert.is(error.line, 5);
  assert.match(error.reason, /Unknown filter "nope"/);
  assert.match(error.message, /^defs\/broken\.yaml:5: /);
  assert.equal(error.toProblem(), { file: 'defs/broken.yaml', line: 5, message: error.reason, severity: 'error' });
});

errors('a syntax error in the header names its line', () => {
  const error = definitionErrorOf(() => compile('{% set a = 1 %}\n{% for %}\n---\na: 1'));
  assert.is(error.line, 2);
});

errors('an unclosed string names the line where it opens', () => {
  const error = definitionErrorOf(() => compile('---\na: 1\nb: {{ "open }}\n'));
  assert.is(error.line, 3);
});

errors('text or {{ }} in the header is refused: it would land in the body', () => {
  const text = definitionErrorOf(() => compile('{% set a = 1 %}\nstray: text\n---\na: 1'));
  assert.is(text.line, 2);
  assert.match(text.reason, /header holds template statements only/);
  const expression = definitionErrorOf(() => compile('{# note #}\n\n{{ a }}\n---\na: 1'));
  assert.is(expression.line, 3);
});

errors('a header may define macros and capture text; a block or verbatim text there is refused', () => {
  assert.equal(fieldsOf(render("{% macro m(a) %}{{ a }}{% endmacro %}\n{% set cols %}id, name{% endset %}\n---\nq: select {{ cols }}")), { q: 'select id, name' });
  assert.is(definitionErrorOf(() => compile('{% set a = 1 %}\n{% block h %}x{% endblock %}\n---\na: 1')).line, 2);
  assert.is(definitionErrorOf(() => compile('{% verbatim %}x: 1{% endverbatim %}\n---\na: 1')).line, 1);
});

errors('a file without --- is all body', () => {
  assert.equal(fieldsOf(render('a: 1\nb: two')), { a: 1, b: 'two' });
});

errors('the placeholder brackets are reserved in definition sources', () => {
  const error = definitionErrorOf(() => compile('a: 1\nb: ⟦0⟧'));
  assert.is(error.line, 2);
});

errors('markup-returning and template-loading built-ins are withdrawn', () => {
  for (const expression of ['x | e', "x | escape('html')", 'x | nl2br', "include('other')", "source('other')", "template_from_string(x)", 'dump(x)']) {
    const error = definitionErrorOf(() => compile(`---\nvalue: {{ ${expression} }}`));
    assert.is(error.line, 2, expression);
    assert.match(error.reason, /Unknown (filter|function)/, expression);
  }
});

errors('a definition is self-contained: no include, embed, extends, use or foreign import', () => {
  const sources: [string, number][] = [
    ["a: 1\n{% include 'other.yaml' %}", 2],
    ["a: 1\n{% embed 'other.yaml' %}{% endembed %}", 2],
    ["{% extends 'base.yaml' %}", 1],
    ["{% use 'blocks.yaml' %}", 1],
    ["a: 1\n\n{% import 'macros.yaml' as m %}", 3],
    ["a: 1\n{% from 'macros.yaml' import pair %}", 2],
  ];
  for (const [source, line] of sources) {
    const error = definitionErrorOf(() => compile(source));
    assert.is(error.line, line, source);
  }
});

errors('a template function that fails names the line', () => {
  const error = definitionErrorOf(() => render("---\n\nvalue: {{ 'a' | filterValWhenVarFalse(42) }}"));
  assert.is(error.line, 3);
  assert.match(error.reason, /rendering failed: .*variable name must be a string/);
  assert.instance(error, DefinitionError);
});

errors.run();
