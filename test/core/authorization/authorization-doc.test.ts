import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decisionTablesMarkdown, TABLE_END, TABLE_START } from './decision-table-markdown.js';

test('docs/authorization.md holds the current decision tables (node scripts/authorization-table.mjs writes them)', async () => {
  const doc = readFileSync(new URL('../../../../docs/authorization.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf(TABLE_START) + TABLE_START.length, doc.indexOf(TABLE_END)).trim();
  assert.fixture(section, await decisionTablesMarkdown());
});

test.run();
