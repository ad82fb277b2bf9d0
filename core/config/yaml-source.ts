import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import { StartupError, type StartupProblem } from '../plugin-api/errors.js';

/** Descriptor and config files are small; anything larger is a mistake or an attack. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** Bounds applied to every YAML parse: aliases (billion laughs), duplicate keys, core schema only. */
export const YAML_PARSE_OPTIONS = { maxAliasCount: 100, uniqueKeys: true, schema: 'core', prettyErrors: false } as const;

/** A parsed YAML file that can say where each value sits, for `file:line: message` problems. */
export interface YamlSource {
  /** Absolute path. */
  path: string;
  /** The path as shown in messages: relative to the working directory. */
  displayPath: string;
  value: unknown;
  /** 1-based line and column of the value at `path` (keys and array indexes), or of its closest parent. */
  locate(path: readonly (string | number)[]): { line: number; column: number };
  problem(path: readonly (string | number)[], message: string): StartupProblem;
}

/** A path as messages show it: relative to the working directory when under it. */
export function displayPath(path: string): string {
  const shown = relative(process.cwd(), path);
  return shown.startsWith('..') ? path : shown;
}

/** Reads and parses one YAML file; a syntax error is a StartupError with its line. */
export function readYamlFile(path: string): YamlSource {
  const shown = displayPath(path);
  let text: string;
  try {
    if (statSync(path).size > MAX_FILE_BYTES) throw new Error(`file is larger than ${MAX_FILE_BYTES} bytes`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    throw new StartupError(`${shown}: ${reason}`, [{ file: shown, message: reason }]);
  }
  return parseYamlText(text, path);
}

export function parseYamlText(text: string, path: string): YamlSource {
  const shown = displayPath(path);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...YAML_PARSE_OPTIONS, prettyErrors: true, lineCounter });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = syntax.linePos?.[0].line;
    const message = `invalid YAML: ${(syntax.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`;
    throw new StartupError(`${shown}${line ? `:${line}` : ''}: ${message}`, [{ file: shown, ...(line ? { line } : {}), message }]);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_PARSE_OPTIONS.maxAliasCount });
  } catch (error) {
    throw new StartupError(`${shown}: invalid YAML: ${(error as Error).message}`, [{ file: shown, message: `invalid YAML: ${(error as Error).message}` }]);
  }
  const locate = (at: readonly (string | number)[]) => locateIn(doc, lineCounter, at);
  return {
    path,
    displayPath: shown,
    value,
    locate,
    problem: (at, message) => ({ file: shown, line: locate(at).line, message }),
  };
}

function locateIn(doc: Document, lineCounter: LineCounter, path: readonly (string | number)[]): { line: number; column: number } {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (isNode(node) && node.range) {
      const { line, col } = lineCounter.linePos(node.range[0]);
      return { line, column: col };
    }
  }
  return { line: 1, column: 1 };
}
