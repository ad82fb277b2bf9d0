import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PreparedStatements } from '../../adapters/postgres/prepared-statements.js';

const same = (text: string) => text;

test('past the budget of distinct texts, a new text still gets a name: the least recently used gives its place', () => {
  const prepared = new PreparedStatements('vdb_', 3);
  const names = ['a', 'b', 'c', 'd', 'e'].map((text) => prepared.of(`select ? as ${text}`, true, same).name);
  assert.ok(names.every((name) => name !== undefined && name.startsWith('vdb_')), names.join());
  assert.is(new Set(names).size, 5);
  // the same text, named again after its eviction, gets the same name: a connection that parsed it still has it
  assert.is(prepared.of('select ? as a', true, same).name, names[0]);
});

test('a text without values, one over the length limit, or one whose result changed runs unnamed', () => {
  const prepared = new PreparedStatements('vdb_', 3);
  assert.is(prepared.of('select 1; select 2', false, same).name, undefined);
  assert.is(prepared.of(`select ? as x${' '.repeat(20_000)}`, true, same).name, undefined);
  const text = prepared.of('select ? as n', true, (key) => key.replace('?', '$1'));
  assert.equal(text.text, 'select $1 as n');
  prepared.unname('select ? as n', text);
  assert.equal(prepared.of('select ? as n', true, same), { text: 'select $1 as n', name: undefined });
});

test('a connection is full once it parsed its share of names; another connection is not', () => {
  const prepared = new PreparedStatements('vdb_', 2);
  const [one, two] = [{}, {}];
  prepared.parsedOn(one).add('vdb_a');
  assert.not.ok(prepared.full(one));
  prepared.parsedOn(one).add('vdb_b');
  assert.ok(prepared.full(one));
  assert.not.ok(prepared.full(two));
});

test.run();
