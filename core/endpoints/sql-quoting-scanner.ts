import type { SqlLexicon } from '../plugin-api/sql-syntax.js';

/** Where text sits in a SQL statement: code, or a stretch the database does not read as code. */
export type SqlRegionKind = 'code' | 'string literal' | 'quoted identifier' | 'comment';

export interface SqlRegion {
  kind: SqlRegionKind;
  start: number;
  /** Exclusive; an unterminated quote or comment runs to the end of the text. */
  end: number;
}

/** A construct the scanner will not guess about; the caller turns it into a definition error. */
export class UnsupportedSqlConstruct extends Error {}

const DOLLAR_QUOTE_OPENER = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y;
const Q_QUOTE_PREFIX = /(?:^|[^A-Za-z0-9_$#])[nN]?[qQ]$/;

function isIdentifierChar(char: string | undefined): boolean {
  return char !== undefined && (/[A-Za-z0-9_$]/.test(char) || char.charCodeAt(0) > 0x7f);
}

/** Splits SQL text into code and the quoted or commented stretches around it, by the dialect's lexicon. */
export function scanSql(text: string, rules: SqlLexicon): SqlRegion[] {
  const regions: SqlRegion[] = [];
  let codeStart = 0;
  let i = 0;
  while (i < text.length) {
    const region = regionAt(text, i, rules);
    if (region === undefined) {
      i++;
      continue;
    }
    if (i > codeStart) regions.push({ kind: 'code', start: codeStart, end: i });
    regions.push(region);
    i = codeStart = region.end;
  }
  if (text.length > codeStart) regions.push({ kind: 'code', start: codeStart, end: text.length });
  return regions;
}

function regionAt(text: string, i: number, rules: SqlLexicon): SqlRegion | undefined {
  const char = text[i];
  const next = text[i + 1];
  const region = (kind: SqlRegionKind, end: number): SqlRegion => ({ kind, start: i, end });
  switch (char) {
    case "'": {
      if (rules.refuseQQuotes && Q_QUOTE_PREFIX.test(text.slice(Math.max(0, i - 3), i))) {
        throw new UnsupportedSqlConstruct("Oracle q'...' literals are not supported in definitions");
      }
      const ePrefixed = /[eE]/.test(text[i - 1] ?? '') && !isIdentifierChar(text[i - 2]);
      const backslash = rules.stringBackslash === 'always' || (rules.stringBackslash === 'e-prefix' && ePrefixed);
      return region('string literal', closeQuote(text, i, "'", backslash));
    }
    case '"':
      return rules.doubleQuotes === 'string'
        ? region('string literal', closeQuote(text, i, '"', rules.stringBackslash === 'always'))
        : region('quoted identifier', closeQuote(text, i, '"', false));
    case '`':
      return rules.backticks ? region('quoted identifier', closeQuote(text, i, '`', false)) : undefined;
    case '[':
      return rules.brackets ? region('quoted identifier', closeQuote(text, i, ']', false)) : undefined;
    case '#':
      return rules.hashComments ? region('comment', lineEnd(text, i)) : undefined;
    case '-':
      if (next !== '-') return undefined;
      if (rules.dashCommentNeedsSpace && text[i + 2] !== undefined && !/\s/.test(text[i + 2] as string)) return undefined;
      return region('comment', lineEnd(text, i));
    case '/':
      if (next !== '*') return undefined;
      if (rules.refuseExecutableComments && /^\/\*M?!/.test(text.slice(i, i + 4))) {
        throw new UnsupportedSqlConstruct('executable comments (/*! ... */) are not supported in definitions');
      }
      return region('comment', closeBlockComment(text, i, rules.nestedBlockComments));
    case '$': {
      if (!rules.dollarQuotes || isIdentifierChar(text[i - 1])) return undefined;
      DOLLAR_QUOTE_OPENER.lastIndex = i;
      const opener = DOLLAR_QUOTE_OPENER.exec(text)?.[0];
      if (opener === undefined) return undefined;
      const close = text.indexOf(opener, i + opener.length);
      return region('string literal', close < 0 ? text.length : close + opener.length);
    }
    default:
      return undefined;
  }
}

/** The end of a quoted stretch opened at `start`; a doubled closing quote is an escaped quote. */
function closeQuote(text: string, start: number, close: string, backslashEscapes: boolean): number {
  let j = start + 1;
  while (j < text.length) {
    const char = text[j];
    if (backslashEscapes && char === '\\') {
      j += 2;
    } else if (char === close) {
      if (text[j + 1] !== close) return j + 1;
      j += 2;
    } else {
      j++;
    }
  }
  return text.length;
}

function closeBlockComment(text: string, start: number, nested: boolean): number {
  let depth = 1;
  let j = start + 2;
  while (j < text.length) {
    if (nested && text.startsWith('/*', j)) {
      depth++;
      j += 2;
    } else if (text.startsWith('*/', j)) {
      j += 2;
      if (--depth === 0) return j;
    } else {
      j++;
    }
  }
  return text.length;
}

function lineEnd(text: string, start: number): number {
  const newline = text.indexOf('\n', start);
  return newline < 0 ? text.length : newline;
}
