import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DIAGNOSTICS, type DiagnosticDefinition } from '../../../core/semantic/diagnostic-codes.js';
import { projectRoot } from '../../support/test-service.js';

test('docs/diagnostics.md lists every diagnostic code with its severity, OSI code and remediation, and no other', () => {
  const doc = readFileSync(join(projectRoot, 'docs', 'diagnostics.md'), 'utf8');
  const row = /^\| `([a-z]+\.[a-z_]+)` \| (\w+) \| (`E[0-9A-Z_]+`|) \| [^\n]* \| ([^\n]*) \|$/gm;
  const rows = new Map([...doc.matchAll(row)].map((match) => [match[1], { severity: match[2], osiCode: match[3], remediation: match[4] }]));
  for (const [code, definition] of Object.entries(DIAGNOSTICS) as [string, DiagnosticDefinition][]) {
    const osiCode = definition.osiCode ? `\`${definition.osiCode}\`` : '';
    assert.equal(rows.get(code), { severity: definition.severity, osiCode, remediation: definition.remediation.replaceAll('|', '\\|') }, code);
  }
  assert.equal([...rows.keys()].filter((code) => !(code in DIAGNOSTICS)), []);
});

test.run();
