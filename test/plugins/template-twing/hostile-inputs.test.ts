import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { scalarValue, toSql } from '../../../core/endpoints/bound-text.js';
import type { SqlFamily } from '../../../core/plugin-api/sql-dialect.js';
import { HOSTILE_INPUTS } from './hostile-inputs.js';
import { compile, fieldsOf, renderContext } from './template-support.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';

const hostile = suite('hostile inputs stay data');

const definition = compile([
  '{% set notFirst = false %}',
  '---',
  'type: sqlDirect',
  'value: {{ x }}',
  'quoted: "{{ x }}"',
  'message: "got {{ x }}!"',
  'query: select * from t where a = {{ x }}',
  'loop: >-',
  "  {% for t in [x, x] %}{{ ' UNION ALL ' | filterValWhenVarFalse('notFirst', true) }}select {{ t }}{% endfor %}",
  '',
].join('\n'), 'defs/hostile.yaml');

const families: SqlFamily[] = ['postgres', 'mysql', 'mssql', 'oracle'];
const baseline = definition.render({ x: null }, renderContext());
const baselineSql = (family: SqlFamily) => toSql(fieldsOf(baseline)['query'] as string, baseline.values, { dialect: FAMILY_DIALECTS[family] }).sql;

for (const { name, value } of HOSTILE_INPUTS) {
  hostile(name, () => {
    const rendered = definition.render({ x: value }, renderContext());
    const document = fieldsOf(rendered);
    // the YAML structure is the one of an empty value: same keys, same token positions
    assert.equal(document, baseline.document);
    assert.equal(rendered.values.length, 6);
    for (const captured of rendered.values) assert.is(captured, value);
    // typed scalars give the input back, plain or quoted
    assert.is(scalarValue(document['value'], rendered.values), value);
    assert.is(scalarValue(document['quoted'], rendered.values), value);
    if (typeof value === 'string') assert.is(scalarValue(document['message'], rendered.values), `got ${value}!`);
    // the SQL text does not change with the value; the value travels as a binding
    for (const family of families) {
      const { sql, bindings } = toSql(document['query'] as string, rendered.values, { dialect: FAMILY_DIALECTS[family] });
      assert.is(sql, baselineSql(family), family);
      assert.equal(bindings, [value]);
      assert.is(bindings[0], value);
    }
    const loop = toSql(document['loop'] as string, rendered.values, { dialect: FAMILY_DIALECTS.postgres });
    assert.is(loop.sql, 'select ? UNION ALL select ?');
  });
}

hostile.run();
