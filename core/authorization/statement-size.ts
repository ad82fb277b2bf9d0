/** The bound on a statement's text, checked before any parser sees it (`sql.maxStatementBytes`, docs/configuration.md). */
import { statementTooComplex, type Denial } from '../plugin-api/denial.js';

/** The denial of a text longer than `maxBytes` UTF-8 bytes, or undefined. */
export function statementTooLong(sql: string, maxBytes: number): Denial | undefined {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short texts need no count.
  if (sql.length * 3 <= maxBytes) return undefined;
  const bytes = Buffer.byteLength(sql, 'utf8');
  return bytes <= maxBytes ? undefined : statementTooComplex(`is ${bytes} bytes long, over the limit of ${maxBytes} (sql.maxStatementBytes)`);
}
