import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { compile, fieldsOf, renderContext } from './template-support.js';

const replay = suite('twing: straight-line definitions render once, then only read their values');

const STRAIGHT = `{# a lookup #}
---
description: lookup
query: |
  select id from orders where customer_id = {{ customerId }} and status = {{ "paid" }} and region = {{ region }} and id > {{ customerId }}
`;

const SAMPLES: Record<string, unknown>[] = [
  { customerId: 7, region: 'EU' },
  { customerId: '7; drop table orders', region: null },
  { customerId: { nested: [1, { deep: true }] }, region: [1, 'two'] },
  { region: 'US' },
  {},
  { customerId: 1.5, region: false, unrelated: 'ignored' },
];

replay('every render after the first answers the same document, with the values a fresh render binds', () => {
  const definition = compile(STRAIGHT);
  const first = definition.render(SAMPLES[0] as Record<string, unknown>, renderContext());
  for (const fields of SAMPLES) {
    const replayed = definition.render(fields, renderContext());
    const fresh = compile(STRAIGHT).render(fields, renderContext());
    assert.is(replayed.document, first.document, 'the first render\'s document, not a new one');
    assert.equal(replayed.document, fresh.document);
    assert.equal(replayed.values, fresh.values);
    assert.equal(replayed.origin, fresh.origin);
  }
  assert.ok(Object.isFrozen(first.document) && Object.isFrozen(first.origin?.lines));
});

replay('a literal print is text, not a value', () => {
  const definition = compile(STRAIGHT);
  definition.render({ customerId: 1, region: 'EU' }, renderContext());
  const { values, document } = definition.render({ customerId: 2, region: 'US' }, renderContext());
  assert.equal(values, [2, 'US', 2]);
  assert.match(String((document as Record<string, unknown>)['query']), /status = paid and/);
});

/** Definitions whose text depends on a value: each must render anew, so two values give two texts. */
const VALUE_SHAPED: Record<string, [string, Record<string, unknown>, Record<string, unknown>]> = {
  'an if': ['query: select {% if x > 5 %}1{% else %}2{% endif %}', { x: 9 }, { x: 1 }],
  'a for': ['query: select 1{% for i in x %}, {{ i }}{% endfor %}', { x: [1] }, { x: [1, 2] }],
  'a splicing filter': ['query: select 1 from {{ x | identifier }}', { x: 'orders' }, { x: 'customers' }],
  'a ternary on a value': ['query: select {{ x ? "a" : "b" }}', { x: true }, { x: false }],
  'a set': ['{% set y = x %}\n---\nquery: select {{ y }}{% if y %} where 1{% endif %}', { x: 1 }, { x: 0 }],
  'a macro': ['{% macro m(v) %}{% if v %}a{% endif %}{% endmacro %}\n---\nquery: select {{ _self.m(x) }}', { x: 1 }, { x: 0 }],
};

for (const [shape, [source, one, other]] of Object.entries(VALUE_SHAPED)) {
  replay(`${shape} renders every time`, () => {
    const definition = compile(source);
    const texts = [one, other, one].map((fields) => String(fieldsOf(definition.render(fields, renderContext())).query));
    assert.is.not(texts[0], texts[1]);
    assert.is(texts[0], texts[2]);
  });
}

replay('a filter or a module function over a value binds its result anew each time', () => {
  const length = compile('query: select {{ x | length }}');
  assert.equal([length.render({ x: 'abc' }, renderContext()).values, length.render({ x: 'abcdef' }, renderContext()).values], [[3], [6]]);
  const upper = compile('query: select {{ strings__upper(x) }}');
  assert.equal([upper.render({ x: 'a' }, renderContext()).values, upper.render({ x: 'b' }, renderContext()).values], [['A'], ['B']]);
});

replay.run();
