import type { PlaceholderOrigin } from '../plugin-api/template-engine.js';

/*
 * Finds the file line of a part of a rendered definition body. The body is rendered from a template, so its
 * YAML positions are not file positions; but names (entities, fields, steps) must be written literally, and
 * each placeholder knows the line of its `{{ expr }}`. The path is followed through the file text by
 * indentation, each step's item found by its `name`, each key by its text (and the name at fault, if any).
 */

const PLACEHOLDER = /⟦(\d+)⟧/;

/** What a body problem is about: a path into the rendered body and, optionally, the name written there. */
export interface BodyLocation {
  path: readonly (string | number)[];
  /** The name at fault (an entity, a column): the line must hold it. */
  literal?: string | undefined;
}

/** The rendered body the path runs through, and where its placeholders came from. */
export interface RenderedBody {
  document: unknown;
  origin: PlaceholderOrigin;
}

/**
 * The 1-based line of the file that best holds `location`: the deepest part of the path found, or the
 * first line of the body when none is.
 */
export function definitionLine(source: string, rendered: RenderedBody, location: BodyLocation): number {
  const lines = codeLines(source);
  const separator = lines.findIndex((line) => /^---[ \t]*$/.test(line));
  const bodyStart = separator + 1;
  let block = { from: bodyStart, to: lines.length };
  let found: number | undefined;
  let node: unknown = rendered.document;
  location.path.forEach((segment, index) => {
    node = childOf(node, segment);
    const last = index === location.path.length - 1;
    const line = typeof segment === 'number'
      ? itemLine(lines, node, rendered.origin, block)
      : keyLine(lines, segment, last ? location.literal : undefined, block);
    if (line === undefined) return;
    found = line;
    block = { from: line, to: blockEnd(lines, line) };
  });
  const placeholder = typeof node === 'string' ? PLACEHOLDER.exec(node) : null;
  const valueLine = placeholder ? rendered.origin.lines[Number(placeholder[1])] : undefined;
  if (valueLine !== undefined) return valueLine;
  return (found ?? firstCodeLine(lines, bodyStart)) + 1;
}

/** The file's lines with template-only lines (`{% ... %}`, `{# ... #}`, also over several lines) blanked. */
function codeLines(source: string): string[] {
  let inComment = false;
  return source.split('\n').map((line) => {
    if (inComment) {
      if (line.includes('#}')) inComment = false;
      return '';
    }
    const trimmed = line.trim();
    if (trimmed.startsWith('{#') && !trimmed.includes('#}')) {
      inComment = true;
      return '';
    }
    return /^(\{%.*%\}|\{#.*#\})$/.test(trimmed) ? '' : line;
  });
}

function childOf(node: unknown, segment: string | number): unknown {
  if (node === null || typeof node !== 'object') return undefined;
  return (node as Record<string | number, unknown>)[segment];
}

/** A list item is found by its `name` (steps have one): the line of its placeholder, or where it is written. */
function itemLine(lines: readonly string[], item: unknown, origin: PlaceholderOrigin, block: Block): number | undefined {
  const name = childOf(item, 'name');
  if (typeof name !== 'string') return undefined;
  const placeholder = PLACEHOLDER.exec(name);
  if (placeholder) {
    const line = origin.lines[Number(placeholder[1])];
    return line === undefined ? undefined : line - 1;
  }
  const written = new RegExp(`(^|[\\s{,-])name\\s*:\\s*["']?${escaped(name)}["']?\\s*([,}#]|$)`);
  return search(lines, block, (line) => written.test(line));
}

function keyLine(lines: readonly string[], key: string, literal: string | undefined, block: Block): number | undefined {
  const keyed = new RegExp(`(^|[\\s{,-])["']?${escaped(key)}["']?\\s*:`);
  const holding = literal === undefined ? undefined : new RegExp(`(^|[^A-Za-z0-9_.])${escaped(literal)}($|[^A-Za-z0-9_])`);
  return search(lines, block, (line) => keyed.test(line) && (holding === undefined || holding.test(line)))
    ?? (holding === undefined ? undefined : search(lines, block, (line) => keyed.test(line)));
}

interface Block {
  /** 0-based, inclusive. */
  from: number;
  /** 0-based, exclusive. */
  to: number;
}

function search(lines: readonly string[], block: Block, matches: (line: string) => boolean): number | undefined {
  for (let at = block.from; at < block.to; at++) if (matches(lines[at] ?? '')) return at;
  return undefined;
}

/** Where the mapping or item starting at `start` ends: the next line indented no deeper (a list may sit at its key's indent). */
function blockEnd(lines: readonly string[], start: number): number {
  const first = lines[start] ?? '';
  const indent = indentOf(first);
  const isItem = first.trimStart().startsWith('- ');
  for (let at = start + 1; at < lines.length; at++) {
    const line = lines[at] ?? '';
    if (line.trim() === '') continue;
    const depth = indentOf(line);
    if (depth < indent) return at;
    if (depth === indent && (isItem || !line.trimStart().startsWith('- '))) return at;
  }
  return lines.length;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function firstCodeLine(lines: readonly string[], from: number): number {
  for (let at = from; at < lines.length; at++) if ((lines[at] ?? '').trim() !== '') return at;
  return Math.max(0, from - 1);
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
