import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { errorTableMarkdown, TABLE_END, TABLE_START } from './error-table-markdown.js';

test('docs/errors.md holds the current error catalog (node scripts/error-table.mjs writes it)', () => {
  const doc = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf(TABLE_START) + TABLE_START.length, doc.indexOf(TABLE_END)).trim();
  assert.fixture(section, errorTableMarkdown());
});

test.run();
