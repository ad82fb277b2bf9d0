/**
 * The artifacts of the reference runtime, without their ids (the task numbers them): the result as a
 * table (JSON and CSV), the answer for a person (Markdown) and the query that produced it.
 */
import type { JsonValue, ResultColumn, Artifact, SemanticQuery } from '../../core/plugin-api/index.js';

export type ArtifactDraft = Omit<Artifact, 'id'>;

/** A query result as an observation carries it. */
export interface ResultTable {
  columns: ResultColumn[];
  rows: Record<string, JsonValue>[];
}

/** Rows the answer shows; the table artifacts hold all of them. */
export const ANSWER_ROWS = 20;

function draft(kind: Artifact['kind'], contentType: string, text: string): ArtifactDraft {
  return { kind, content: { contentType, data: Buffer.from(text, 'utf8').toString('base64') } };
}

/** Objects and arrays (JSON columns) as JSON text; null as nothing. */
function textOf(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled; records end with CRLF. */
export function csvOf(table: ResultTable): string {
  const field = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  const records = [
    table.columns.map((column) => field(column.name)),
    ...table.rows.map((row) => table.columns.map((column) => field(textOf(row[column.name])))),
  ];
  return records.map((record) => `${record.join(',')}\r\n`).join('');
}

/** A Markdown table of the first `ANSWER_ROWS` rows; `|` escaped and line breaks flattened so a cell stays a cell. */
export function markdownTableOf(table: ResultTable): string {
  const cell = (text: string) => text.replaceAll('\\', '\\\\').replaceAll('|', '\\|').replace(/\r?\n|\r/g, ' ');
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(table.columns.map((column) => cell(column.name))),
    line(table.columns.map(() => '---')),
    ...table.rows.slice(0, ANSWER_ROWS).map((row) => line(table.columns.map((column) => cell(textOf(row[column.name]))))),
  ].join('\n');
}

/** The result twice: `{columns, rows}` as JSON for programs, and CSV for spreadsheets. */
export function tableArtifacts(table: ResultTable): ArtifactDraft[] {
  return [
    draft('table', 'application/json', JSON.stringify({ columns: table.columns, rows: table.rows })),
    draft('table', 'text/csv', csvOf(table)),
  ];
}

export function answerArtifact(markdown: string): ArtifactDraft {
  return draft('answer', 'text/markdown', markdown);
}

export function queryArtifact(sql: string): ArtifactDraft {
  return draft('query', 'application/sql', sql);
}

/** The semantic query the service compiled, as JSON (docs/semantic-query.md). */
export function semanticQueryArtifact(query: SemanticQuery): ArtifactDraft {
  return draft('query', 'application/vnd.vdb.semantic-query+json', JSON.stringify(query, null, 2));
}

/** The answer to a completed query: what it computed, how many rows, the first of them, and what was left out. */
export function resultAnswer(subject: string, table: ResultTable & { rowCount: number; truncated: boolean }, notes: readonly string[]): string {
  const count = `${table.rowCount} row${table.rowCount === 1 ? '' : 's'}`;
  const parts = [`**${subject}**: ${count}${table.truncated ? ' (the service cut the result short)' : ''}.`];
  if (table.columns.length > 0) parts.push(markdownTableOf(table));
  if (table.rows.length > ANSWER_ROWS) parts.push(`Showing the first ${ANSWER_ROWS} of ${table.rows.length} rows; the table artifacts hold all of them.`);
  parts.push(...notes.map((note) => `Note: ${note}.`));
  return parts.join('\n\n');
}
