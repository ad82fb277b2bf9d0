/**
 * The curl lines of the README's walk-through, with what the README says each answers: the status its
 * comment starts with, and the facts it quotes from the body. The test that runs them against the demo reads
 * them from here, so the README stays the one place they are written.
 */

export interface ReadmeCurl {
  /** The command as the README writes it (continuation lines joined), without a pipe that follows it. */
  command: string;
  /** Whether the README pipes the output (through jq, grep, base64): its comments then describe that output. */
  piped: boolean;
  /** The status the README says, or undefined when it says none. */
  status: number | undefined;
  /** `"key":value` pieces of JSON the README quotes from the body, each to be found in it as written. */
  fragments: string[];
  /** Error codes and states the README names in words (`400 unknown_identifier`, `state failed`). */
  codes: string[];
  states: string[];
  /** The 1-based README line of the command. */
  line: number;
}

export interface Walkthrough {
  /** The variable assignments (`ADMIN="..."`), in order, run before every command. */
  assignments: string[];
  curls: ReadmeCurl[];
}

const JSON_FRAGMENT = /"[A-Za-z_][A-Za-z0-9_]*":(?:"(?:[^"\\…]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)(?=[,}\]\s]|$)/g;
const STATUS = /^(\d{3})\b/;
/** `state failed`: a task or semantic state named in words. */
const STATE = /\bstate (working|input_required|completed|cancelled|budget_exceeded|failed|active|invalid|compileFailed|catalogOnly)\b/g;

/**
 * Reads the `sh` blocks of the section titled `heading` (up to the next `## `): each `curl` line with its
 * continuations, the comment at its end and the comment lines right below it.
 */
export function readWalkthrough(readme: string, heading: string, codes: ReadonlySet<string>): Walkthrough {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`README.md has no section ${heading}`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  const assignments: string[] = [];
  const curls: ReadmeCurl[] = [];
  let inShell = false;
  let current: { command: string; comments: string[]; inline: string; line: number } | undefined;
  const finish = () => {
    if (current) curls.push(describe(current, codes));
    current = undefined;
  };
  for (let index = start + 1; index < (end < 0 ? lines.length : end); index++) {
    const line = lines[index] ?? '';
    if (line.startsWith('```')) {
      finish();
      inShell = !inShell && line.trim() === '```sh';
      continue;
    }
    if (!inShell) continue;
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) {
      current?.comments.push(trimmed.replace(/^#\s?/, ''));
      continue;
    }
    finish();
    if (/^[A-Z_]+=/.test(trimmed)) {
      assignments.push(splitComment(trimmed).code);
      continue;
    }
    if (!trimmed.startsWith('curl ')) continue;
    let text = line;
    const first = index + 1;
    while (splitComment(text).code.endsWith('\\') && index + 1 < lines.length) text = `${splitComment(text).code.slice(0, -1)} ${(lines[++index] ?? '').trim()}`;
    const { code, comment } = splitComment(text.trim());
    current = { command: code, comments: [], inline: comment, line: first };
  }
  finish();
  return { assignments, curls };
}

function describe(found: { command: string; comments: string[]; inline: string; line: number }, codes: ReadonlySet<string>): ReadmeCurl {
  const pipe = unquotedIndex(found.command, '|');
  const command = (pipe < 0 ? found.command : found.command.slice(0, pipe)).trim();
  const said = [found.inline, ...found.comments].filter((text) => text !== '');
  const statusText = STATUS.test(found.inline) ? found.inline : found.comments[0] ?? '';
  const status = STATUS.exec(statusText)?.[1];
  const text = said.join(' ');
  const afterStatus = /^\d{3}\s+([a-z_]+)/.exec(statusText)?.[1];
  const words = [...text.matchAll(/\b[a-z]+(?:_[a-z]+)+\b/g)].map((match) => match[0]);
  return {
    command,
    piped: pipe >= 0,
    status: status === undefined ? undefined : Number(status),
    fragments: [...text.matchAll(JSON_FRAGMENT)].map((match) => match[0]),
    codes: [...new Set([...words, ...(afterStatus === undefined ? [] : [afterStatus])].filter((word) => codes.has(word)))],
    states: [...text.matchAll(STATE)].map((match) => match[1] as string),
    line: found.line,
  };
}

/** A shell line split at the first `#` that starts a comment (after a space, outside quotes). */
function splitComment(line: string): { code: string; comment: string } {
  const at = unquotedIndex(line, '#', (text, index) => index === 0 || /\s/.test(text[index - 1] ?? ''));
  return at < 0 ? { code: line.trimEnd(), comment: '' } : { code: line.slice(0, at).trimEnd(), comment: line.slice(at + 1).trim() };
}

/** Where `char` first occurs outside single, double and `$'...'` quotes; -1 when it does not. */
function unquotedIndex(text: string, char: string, accept: (text: string, index: number) => boolean = () => true): number {
  // the quote open, and whether a backslash escapes in it (in "..." and $'...', not in '...')
  let quote: { close: string; escapes: boolean } | undefined;
  for (let index = 0; index < text.length; index++) {
    const current = text[index];
    if (quote) {
      if (current === '\\' && quote.escapes) index++;
      else if (current === quote.close) quote = undefined;
      continue;
    }
    if (current === '$' && text[index + 1] === "'") {
      quote = { close: "'", escapes: true };
      index++;
      continue;
    }
    if (current === '"' || current === "'") quote = { close: current, escapes: current === '"' };
    else if (current === char && accept(text, index)) return index;
  }
  return -1;
}

/** A `psql` line of the walk-through with the comment lines below it: what psql prints, line by line. */
export interface ReadmePsql {
  command: string;
  expected: string[];
  line: number;
}

/** The `psql "…"` lines of the `sh` blocks of the section titled `heading`, each with the comments below it. */
export function readPsqlCommands(readme: string, heading: string): ReadmePsql[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  const found: ReadmePsql[] = [];
  let inShell = false;
  // the psql line the comment lines below it belong to; any other line ends them
  let current: ReadmePsql | undefined;
  for (let index = start + 1; index < (end < 0 ? lines.length : end); index++) {
    const line = (lines[index] ?? '').trim();
    if (line.startsWith('```')) {
      inShell = !inShell && line === '```sh';
      current = undefined;
    } else if (inShell && line.startsWith('psql ')) {
      current = { command: line, expected: [], line: index + 1 };
      found.push(current);
    } else if (inShell && line.startsWith('#') && current !== undefined) {
      current.expected.push(line.replace(/^#\s?/, ''));
    } else {
      current = undefined;
    }
  }
  return found;
}
