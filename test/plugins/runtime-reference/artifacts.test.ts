import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ANSWER_ROWS, csvOf, markdownTableOf, resultAnswer, tableArtifacts, type ResultTable } from '../../../plugins/runtime-reference/artifacts.js';

const awkward: ResultTable = {
  columns: [{ name: 'name', logicalType: 'string' }, { name: 'total', logicalType: 'decimal' }, { name: 'notes', logicalType: 'json' }],
  rows: [
    { name: 'Plain', total: '12.50', notes: null },
    { name: 'Comma, Inc.', total: 3, notes: { tags: ['a', 'b'] } },
    { name: 'Say "hi"\r\nnext line', total: true, notes: [1, 2] },
    { name: 'pipe | inside', total: null, notes: 'x' },
  ],
};

const artifacts = suite('reference runtime: artifacts');

artifacts('CSV follows RFC 4180: quoted when needed, quotes doubled, CRLF after every record, null empty, JSON as text', () => {
  assert.is(csvOf(awkward), [
    'name,total,notes',
    'Plain,12.50,',
    '"Comma, Inc.",3,"{""tags"":[""a"",""b""]}"',
    '"Say ""hi""\r\nnext line",true,"[1,2]"',
    'pipe | inside,,x',
    '',
  ].join('\r\n'));
});

artifacts('the JSON table holds columns and rows as observed; both tables are Base64', () => {
  const [json, csv] = tableArtifacts(awkward);
  assert.equal(json, { kind: 'table', content: { contentType: 'application/json', data: Buffer.from(JSON.stringify(awkward)).toString('base64') } });
  assert.is(csv?.content.contentType, 'text/csv');
  assert.is(Buffer.from(csv?.content.data ?? '', 'base64').toString('utf8'), csvOf(awkward));
});

artifacts('a Markdown cell escapes pipes and flattens line breaks', () => {
  const lines = markdownTableOf(awkward).split('\n');
  assert.is(lines.length, 2 + awkward.rows.length);
  assert.is(lines[0], '| name | total | notes |');
  assert.is(lines[4], '| Say "hi" next line | true | [1,2] |');
  assert.is(lines[5], '| pipe \\| inside |  | x |');
});

artifacts('the answer shows the first rows and says what is left out', () => {
  const rows = Array.from({ length: 45 }, (_, index) => ({ n: index }));
  const text = resultAnswer('n by nothing', { columns: [{ name: 'n', logicalType: 'integer' }], rows, rowCount: 45, truncated: true }, ['x is left out']);
  assert.match(text, /^\*\*n by nothing\*\*: 45 rows \(the service cut the result short\)\.\n\n\| n \|/);
  assert.is(text.split('\n').filter((line) => /^\| \d+ \|$/.test(line)).length, ANSWER_ROWS);
  assert.match(text, 'Showing the first 20 of 45 rows; the table artifacts hold all of them.');
  assert.match(text, 'Note: x is left out.');
  assert.is(resultAnswer('one', { columns: [{ name: 'n', logicalType: 'integer' }], rows: [{ n: 1 }], rowCount: 1, truncated: false }, []).split('\n')[0], '**one**: 1 row.');
});

artifacts.run();
