// Writes the authorizer's decision tables into docs/authorization.md, between its markers, from the compiled
// test table (test/core/authorization/decision-table.ts). Run after `npm run build`; a suite checks the doc is current.
import { readFileSync, writeFileSync } from 'node:fs';

const { decisionTablesMarkdown, TABLE_START, TABLE_END } = await import('../dist/test/core/authorization/decision-table-markdown.js');

const file = new URL('../docs/authorization.md', import.meta.url);
const doc = readFileSync(file, 'utf8');
const start = doc.indexOf(TABLE_START);
const end = doc.indexOf(TABLE_END);
if (start === -1 || end < start) {
  console.error('docs/authorization.md: the decision-table markers are missing');
  process.exit(1);
}
const table = await decisionTablesMarkdown();
writeFileSync(file, `${doc.slice(0, start + TABLE_START.length)}\n${table}\n${doc.slice(end)}`);
console.log('docs/authorization.md: decision tables written');
