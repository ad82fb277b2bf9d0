import { parseDocument } from 'yaml';
import { parseYamlText, YAML_PARSE_OPTIONS, type YamlSource } from '../config/yaml-source.js';
import { messageOf, StartupError } from '../plugin-api/errors.js';
import type { SourceLocation } from './semantic-types.js';
import { readYamlValue } from './yaml-value-reader.js';

export type DocumentPath = readonly (string | number)[];

/** A parsed document that can say where a value sits, for diagnostics. */
export interface LocatedDocument {
  value: unknown;
  /** 1-based line and column of the value at `path`, or of its closest parent. */
  locate(path: DocumentPath): SourceLocation;
}

export type DocumentSyntax = 'yaml' | 'json';

export type ParseOutcome =
  | { ok: true; document: LocatedDocument }
  | { ok: false; message: string; location: SourceLocation };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a module file. Values come from a fast parser that keeps no positions: js-yaml with the kernel's core
 * schema for YAML (see yaml-value-reader.ts), JSON.parse for JSON; both are an order of magnitude faster than the
 * kernel's parser on generated models. Locations are found only when a diagnostic needs one, by reading the text
 * again with the kernel's parser (JSON is YAML). YAML that the fast reader leaves to the kernel (anchors and
 * aliases, tags, keys that are not strings, syntax errors) is read by the kernel's bounded parser, as before.
 */
export function parseModuleText(bytes: Uint8Array, syntax: DocumentSyntax, label: string): ParseOutcome {
  let text: string;
  try {
    text = utf8.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    return { ok: false, message: 'the file is not UTF-8 text', location: { line: 1, column: 1 } };
  }
  return syntax === 'json' ? parseJson(text, label) : parseYaml(text, label);
}

function parseYaml(text: string, label: string): ParseOutcome {
  const read = readYamlValue(text);
  if (read) return { ok: true, document: { value: read.value, locate: locateLater(text, label) } };
  try {
    const source = parseYamlText(text, label);
    return { ok: true, document: { value: source.value, locate: (path) => source.locate(path) } };
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    return { ok: false, message: error.problems[0]?.message ?? error.message, location: yamlErrorLocation(text) };
  }
}

/** The kernel's parser reports only the line of a syntax error; the column comes from a second read. */
function yamlErrorLocation(text: string): SourceLocation {
  const position = parseDocument(text, { ...YAML_PARSE_OPTIONS, prettyErrors: true }).errors[0]?.linePos?.[0];
  return position ? { line: position.line, column: position.col } : { line: 1, column: 1 };
}

function parseJson(text: string, label: string): ParseOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const offset = /position (\d+)/.exec(messageOf(error))?.[1];
    return { ok: false, message: `invalid JSON: ${messageOf(error)}`, location: offset === undefined ? { line: 1, column: 1 } : locationOfOffset(text, Number(offset)) };
  }
  return { ok: true, document: { value, locate: locateLater(text, label) } };
}

/**
 * Locations from the kernel's parser, which reads the text once, at the first question. Should it refuse a text
 * the fast parser took (JSON.parse keeps the last of duplicate keys, the kernel refuses them), every location is
 * the start of the document rather than an exception in the middle of a diagnostic.
 */
function locateLater(text: string, label: string): LocatedDocument['locate'] {
  let located: YamlSource | null | undefined;
  return (path) => {
    if (located === undefined) {
      try {
        located = parseYamlText(text, label);
      } catch (error) {
        if (!(error instanceof StartupError)) throw error;
        located = null;
      }
    }
    return located ? located.locate(path) : { line: 1, column: 1 };
  };
}

function locationOfOffset(text: string, offset: number): SourceLocation {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
