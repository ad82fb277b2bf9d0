import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { scalarValue, toSql } from '../../../core/endpoints/bound-text.js';
import { DeferredValue } from '../../../core/endpoints/deferred-value.js';
import { InputError } from '../../../core/plugin-api/errors.js';
import { compile, definitionErrorOf, fieldsOf, render, renderContext } from './template-support.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';

const rendering = suite('twing rendering: values keep their type');

const valueOf = (source: string, fields: Record<string, unknown>, key = 'value') => {
  const rendered = render(source, fields);
  return scalarValue(fieldsOf(rendered)[key], rendered.values);
};

rendering('an absent variable is null, plain or quoted', () => {
  assert.is(valueOf('value: {{ missing }}', {}), null);
  assert.is(valueOf('value: "{{ missing }}"', {}), null);
  assert.is(valueOf('value: {{ missing.field }}', {}), null);
});

rendering('numbers, booleans, null and objects stay themselves in plain and double-quoted scalars', () => {
  const samples: unknown[] = [42, 3.5, -7, true, false, null, { id: 1, tags: ['a'] }, [1, 'two'], '42', 'true'];
  for (const sample of samples) {
    assert.equal(valueOf('value: {{ x }}', { x: sample }), sample);
    assert.equal(valueOf('value: "{{ x }}"', { x: sample }), sample);
    assert.equal(valueOf("value: '{{ x }}'", { x: sample }), sample);
  }
});

rendering('a placeholder among other text is interpolated as text', () => {
  const rendered = render('message: "Customer {{ id }} has {{ count }} orders{{ none }}"', { id: 'C-7', count: 3 });
  assert.is(scalarValue(fieldsOf(rendered)['message'], rendered.values), 'Customer C-7 has 3 orders');
});

rendering('a hash built in the template binds as a plain object (dataType json)', () => {
  const value = valueOf('value: {{ { id: x, lines: [1, 2] } }}', { x: 9 });
  assert.equal(value, { id: 9, lines: [1, 2] });
  assert.not.instance(value, Map);
});

rendering('_context carries the request context', () => {
  const rendered = render('vdb: {{ _context.vdb }}\nsubject: {{ _context.caller.subject }}\nnow: {{ _context.now }}');
  const document = fieldsOf(rendered);
  assert.is(scalarValue(document['vdb'], rendered.values), 'retail');
  assert.is(scalarValue(document['subject'], rendered.values), 'alice');
  assert.equal(scalarValue(document['now'], rendered.values), new Date('2026-01-02T03:04:05Z'));
});

rendering('a request field named _context cannot replace the request context', () => {
  assert.is(valueOf('value: {{ _context.caller.subject }}', { _context: { caller: { subject: 'mallory' } } }), 'alice');
});

rendering('header statements set variables for the body', () => {
  const rendered = render("{% set limit = 10 %}\n{% set label = 'x' %}\n---\nlimit: {{ limit }}\nlabel: {{ label }}\n");
  assert.equal(fieldsOf(rendered), { limit: '⟦0⟧', label: '⟦1⟧' });
  assert.equal(rendered.values, [10, 'x']);
});

rendering('renders of the same shape share one frozen document', () => {
  const definition = compile('a: {{ x }}\nb: [1, 2]');
  const first = definition.render({ x: 1 }, renderContext());
  const second = definition.render({ x: 'other' }, renderContext());
  assert.is(first.document, second.document);
  assert.ok(Object.isFrozen(first.document));
  assert.ok(Object.isFrozen(fieldsOf(first)['b']));
  assert.equal(second.values, ['other']);
});

rendering('origin lines name the file line of each placeholder', () => {
  const rendered = compile('{% set a = 1 %}\n---\nx: {{ a }}\ny:\n  - {{ b }}', 'defs/lines.yaml').render({ b: 2 }, renderContext());
  assert.equal(rendered.origin, { file: 'defs/lines.yaml', lines: [3, 5] });
});

rendering('macros and captured blocks bind their values too', () => {
  const source = [
    '{% macro pair(k, v) %}{{ k }}={{ v }}{% endmacro %}{% import _self as m %}',
    "{% set where %}a = {{ a }}{% endset %}",
    '---',
    'query: select 1 where {{ where }} and {{ m.pair(b, c) }}',
  ].join('\n');
  const rendered = render(source, { a: "'", b: 'k', c: 'v' });
  assert.is(fieldsOf(rendered)['query'], 'select 1 where a = ⟦0⟧ and ⟦1⟧=⟦2⟧');
  assert.equal(rendered.values, ["'", 'k', 'v']);
});

rendering('blocks bind their values and block() reprints them as template output', () => {
  const rendered = render("a: {% block b %}{{ v }}{% endblock %}\n\nc: {{ block('b') }}", { v: "'x" });
  assert.equal(fieldsOf(rendered), { a: '⟦0⟧', c: '⟦1⟧' });
  assert.equal(rendered.values, ["'x", "'x"]);
});

rendering('{% autoescape false %} does not turn values into text', () => {
  const rendered = render("{% autoescape false %}value: {{ x }}{% endautoescape %}", { x: "'; --" });
  assert.is(fieldsOf(rendered)['value'], '⟦0⟧');
});

rendering('a value shaped like twing markup is data, not text', () => {
  const forged = { charset: 'UTF-8', content: 'a: b', count: 1, toJSON: 'x', toString: 'x' };
  const rendered = render('value: {{ x }}', { x: forged });
  assert.is(rendered.values[0], forged);
});

rendering('a rendered body that is not YAML is a DefinitionError naming the file', () => {
  const error = definitionErrorOf(() => render('a: {{ x }}\n  b: [', { x: 1 }));
  assert.is(error.file, 'defs/test.yaml');
  assert.match(error.message, /rendered body is not valid YAML/);
});

rendering('variables lists what the template reads, without its own assignments', () => {
  const definition = compile("{% set n = 1 %}{% macro m(arg, other = 2) %}{{ arg }}{{ other }}{% endmacro %}\n---\n{% for t in tables %}{{ t }}{{ n }}{{ loop.index }}{% endfor %}: {{ customer.id }} {{ _context.vdb }}");
  assert.equal(definition.variables, ['customer', 'tables']);
});

const functions = suite('twing rendering: built-in and module functions');

functions('uuid() is a bound value, fresh on each call', () => {
  const rendered = render('a: {{ uuid() }}\nb: {{ uuid() }}');
  assert.equal(fieldsOf(rendered), { a: '⟦0⟧', b: '⟦1⟧' });
  const [a, b] = rendered.values as string[];
  assert.match(a!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is.not(a, b);
});

functions('fromYamlArrayToIterable loops over an array, the YAML text of one, or nothing', () => {
  const source = 'items:\n{% for i in fromYamlArrayToIterable(list) %}\n  - {{ i }}\n{% endfor %}\n';
  const itemsOf = (list: unknown) => {
    const rendered = render(source, { list });
    return ((fieldsOf(rendered)['items'] ?? []) as unknown[]).map((item) => scalarValue(item, rendered.values));
  };
  assert.equal(itemsOf([1, 'two', { three: 3 }]), [1, 'two', { three: 3 }]);
  assert.equal(itemsOf('- 1\n- two\n- {three: 3}'), [1, 'two', { three: 3 }]);
  assert.equal(itemsOf('[a, "b: c"]'), ['a', 'b: c']);
  assert.equal(itemsOf(null), []);
  assert.equal(itemsOf(undefined), []);
});

functions('fromYamlArrayToIterable refuses anything but an array as a bad request', () => {
  for (const list of ['a: 1', '[unclosed', 'x: &a [1]\ny: *b', 42, { a: 1 }]) {
    assert.throws(() => render('{% for i in fromYamlArrayToIterable(list) %}{% endfor %}', { list }), (error: unknown) => error instanceof InputError && error.code === 'invalid_body');
  }
});

functions('deferValueProcessing yields a DeferredValue for the action engine', () => {
  const rendered = render("value: {{ deferValueProcessing(contextVar='order.id') }}");
  const value = scalarValue(fieldsOf(rendered)['value'], rendered.values);
  assert.instance(value, DeferredValue);
  assert.is((value as DeferredValue).contextVar, 'order.id');
  assert.is((value as DeferredValue).resolveIn({ order: { id: 17 } }), 17);
  assert.is((value as DeferredValue).resolveIn({}), undefined);
});

functions('deferValueProcessing needs a literal <variable>.<field> path', () => {
  const error = definitionErrorOf(() => compile('---\nvalue: {{ deferValueProcessing(contextVar=path) }}'));
  assert.is(error.line, 2);
  definitionErrorOf(() => compile("value: {{ deferValueProcessing(contextVar='order') }}"));
});

functions('a deferred value inside other text is refused', () => {
  const rendered = render("value: id-{{ deferValueProcessing(contextVar='order.id') }}");
  assert.throws(() => scalarValue(fieldsOf(rendered)['value'], rendered.values), /whole YAML scalar/);
});

functions('module functions are called as <module>__<function> and their result is bound', () => {
  const rendered = render('slug: {{ strings__slugify(title) }}\nquery: select 1 where s = {{ strings__upper(title) }}', { title: "Crème Brûlée'; --" });
  assert.equal(fieldsOf(rendered), { slug: '⟦0⟧', query: 'select 1 where s = ⟦1⟧' });
  assert.equal(rendered.values, ['creme-brulee', "CRÈME BRÛLÉE'; --"]);
});

functions('| identifier checks the name and splices it quoted; an unknown name fails with the checker error', () => {
  const rendered = render('query: select * from {{ t | identifier }}', { t: 'orders' });
  assert.is(fieldsOf(rendered)['query'], 'select * from "orders"');
  assert.throws(() => render('query: select * from {{ t | identifier }}', { t: 'orders; drop table x' }), /unknown relation/);
});

functions('an error of the service thrown by the identifier check passes through unchanged', () => {
  const refusal = new InputError('unknown_identifier', 'no such relation');
  const context = { ...renderContext(), identifier: () => { throw refusal; } };
  assert.throws(() => compile('query: select * from {{ t | identifier }}').render({ t: 'x' }, context), (error: unknown) => error === refusal);
});

functions('| raw splices trusted text and each use is reported as a warning', () => {
  const definition = compile("{% set cols = 'id, name' %}\n---\nquery: select {{ cols | raw }} from t\nother: {{ 'x' | raw }}");
  assert.equal(definition.warnings.map((warning) => [warning.line, warning.severity]), [[3, 'warning'], [4, 'warning']]);
  const rendered = definition.render({}, renderContext());
  assert.is(fieldsOf(rendered)['query'], 'select id, name from t');
  assert.equal(rendered.values, []);
});

functions('| raw refuses text holding placeholder brackets', () => {
  assert.throws(() => render('value: {{ x | raw }}', { x: '⟦0⟧' }), /placeholder|reserved|trusted text/);
});

const sqlOfDefinition = suite('twing rendering: SQL text and bindings');

const sqlOf = (source: string, fields: Record<string, unknown>) => {
  const rendered = render(source, fields);
  return toSql(fieldsOf(rendered)['query'] as string, rendered.values, { dialect: FAMILY_DIALECTS.postgres, origin: rendered.origin });
};

sqlOfDefinition('a UNION ALL built with a loop binds values in text order', () => {
  const source = [
    '{% set notFirst = false %}',
    '---',
    'type: sqlDirect',
    'query: >-',
    "  {% for t in tables %}{{ ' UNION ALL ' | filterValWhenVarFalse('notFirst', true) }}select id, {{ loop.index }} as n from {{ t | identifier }} where owner = {{ owner }}{% endfor %}",
    '',
  ].join('\n');
  const { sql, bindings } = sqlOf(source, { tables: ['orders', 'order_lines', 'customers'], owner: 'alice' });
  assert.is(sql, 'select id, ? as n from "orders" where owner = ? UNION ALL select id, ? as n from "order_lines" where owner = ? UNION ALL select id, ? as n from "customers" where owner = ?');
  assert.equal(bindings, [1, 'alice', 2, 'alice', 3, 'alice']);
});

sqlOfDefinition('filterValWhenVarFalse: a literal passes as text, a variable through it is still bound', () => {
  const source = [
    '{% set notFirst = false %}{% set also = false %}',
    '---',
    "query: select 1{% for v in values %}{{ ' UNION ALL ' | filterValWhenVarFalse('notFirst', true) }}{{ v | filterValWhenVarFalse('also', true) }}{% endfor %}",
  ].join('\n');
  const rendered = render(source, { values: ["'a'", 'b; --', 'c'] });
  assert.is(fieldsOf(rendered)['query'], 'select 1⟦0⟧ UNION ALL ⟦1⟧ UNION ALL ⟦2⟧');
  assert.equal(rendered.values, [null, 'b; --', 'c']);
});

sqlOfDefinition('filterValWhenVarFalse without flip keeps the variable as it is', () => {
  const rendered = render("{% set on = true %}{% set off = false %}\n---\na: x{{ '-on' | filterValWhenVarFalse('on') }}{{ '-off' | filterValWhenVarFalse('off') }}{{ '-off' | filterValWhenVarFalse('off') }}");
  assert.is(fieldsOf(rendered)['a'], 'x-on');
});

sqlOfDefinition('literals, concatenations of literals and literal choices are text', () => {
  const rendered = render("query: select {{ 'a' ~ 'b' }}, {{ 1 }}, {{ flag ? 'x' : 'y' }}, {{ flag ? 'x' : v }}", { flag: false, v: 'z' });
  assert.is(fieldsOf(rendered)['query'], 'select ab, 1, y, ⟦0⟧');
  assert.equal(rendered.values, ['z']);
});

sqlOfDefinition('anything computed from a variable is bound, filters included', () => {
  const rendered = render("query: select {{ 'a' ~ v }}, {{ v | upper }}, {{ v | default('d') }}, {{ v.length }}", { v: 'q' });
  assert.is(fieldsOf(rendered)['query'], 'select ⟦0⟧, ⟦1⟧, ⟦2⟧, ⟦3⟧');
});

sqlOfDefinition('a literal ? in the template is escaped for knex; a bound value is a ?', () => {
  const { sql, bindings } = sqlOf("query: select data ? 'key', '?' from t where a = {{ a }}", { a: 1 });
  assert.is(sql, "select data \\? 'key', '\\?' from t where a = ?");
  assert.equal(bindings, [1]);
});

sqlOfDefinition('a quoted placeholder is a DefinitionError at its file line', () => {
  const source = "{% set a = 1 %}\n---\ntype: sqlDirect\nquery: select * from t where a = '{{ x }}'\n";
  const error = definitionErrorOf(() => sqlOf(source, { x: 'v' }));
  assert.is(error.file, 'defs/test.yaml');
  assert.is(error.line, 4);
  assert.is(error.reason, 'quoted placeholder: bind the value, drop the quotes');
  assert.match(error.remediation ?? '', /string literal/);
});

rendering.run();
functions.run();
sqlOfDefinition.run();
