// Writes the error catalog (core/plugin-api/error-catalog.ts) into docs/errors.md, between its markers, through
// the compiled renderer (test/core/plugin-api/error-table-markdown.ts). Run after `npm run build`; a suite checks the doc is current.
import { readFileSync, writeFileSync } from 'node:fs';

const { errorTableMarkdown, TABLE_START, TABLE_END } = await import('../dist/test/core/plugin-api/error-table-markdown.js');

const file = new URL('../docs/errors.md', import.meta.url);
const doc = readFileSync(file, 'utf8');
const start = doc.indexOf(TABLE_START);
const end = doc.indexOf(TABLE_END);
if (start === -1 || end < start) {
  console.error('docs/errors.md: the error-table markers are missing');
  process.exit(1);
}
writeFileSync(file, `${doc.slice(0, start + TABLE_START.length)}\n${errorTableMarkdown()}\n${doc.slice(end)}`);
console.log('docs/errors.md: error table written');
