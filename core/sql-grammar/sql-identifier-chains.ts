/**
 * Where column references sit in the text of a mysql, mssql or oracle expression. node-sql-parser says
 * which references an expression holds but not reliably where (T-SQL nodes carry no location), so a small
 * lexer finds the dotted name chains outside strings and comments, and a chain counts as a reference when
 * the parser reported its name and it is not a function call.
 */
import type { SqlFamily } from '../plugin-api/sql-dialect.js';

/** A column reference as written: `total`, `orders.total`; offsets are string indexes in the expression. */
export interface ColumnReference {
  parts: string[];
  start: number;
  end: number;
}

interface Token {
  kind: 'name' | 'dot' | 'open' | 'other';
  start: number;
  end: number;
  /** For names: the identifier without its quotes. */
  text: string;
}

const NAME_START = /[A-Za-z_@\u0080-\uffff]/;
const NAME_PART = /[A-Za-z0-9_@$#\u0080-\uffff]/;

/** Quote characters that delimit identifiers, and whether `\` escapes inside strings, per family. */
const LEXICON: Readonly<Record<Exclude<SqlFamily, 'postgres'>, { identifierQuotes: Record<string, string>; backslashEscapes: boolean }>> = {
  mysql: { identifierQuotes: { '`': '`' }, backslashEscapes: true },
  mssql: { identifierQuotes: { '"': '"', '[': ']' }, backslashEscapes: false },
  oracle: { identifierQuotes: { '"': '"' }, backslashEscapes: false },
};

function tokenize(text: string, family: Exclude<SqlFamily, 'postgres'>): Token[] {
  const { identifierQuotes, backslashEscapes } = LEXICON[family];
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    const start = i;
    if (/\s/.test(char)) {
      i++;
    } else if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (identifierQuotes[char]) {
      const close = identifierQuotes[char];
      let name = '';
      i++;
      while (i < text.length) {
        if (text[i] === close && text[i + 1] === close) {
          name += close;
          i += 2;
        } else if (text[i] === close) {
          i++;
          break;
        } else {
          name += text[i];
          i++;
        }
      }
      tokens.push({ kind: 'name', start, end: i, text: name });
    } else if (char === "'" || char === '"') {
      i++;
      while (i < text.length && text[i] !== char) i += backslashEscapes && text[i] === '\\' ? 2 : 1;
      i++;
      // A doubled quote continues the same literal.
      if (text[i] === char) continue;
      tokens.push({ kind: 'other', start, end: i, text: '' });
    } else if (NAME_START.test(char)) {
      while (i < text.length && NAME_PART.test(text[i] as string)) i++;
      tokens.push({ kind: 'name', start, end: i, text: text.slice(start, i) });
    } else if (/[0-9]/.test(char)) {
      while (i < text.length && /[0-9A-Za-z_.]/.test(text[i] as string)) i++;
      tokens.push({ kind: 'other', start, end: i, text: '' });
    } else {
      i++;
      tokens.push({ kind: char === '.' ? 'dot' : char === '(' ? 'open' : 'other', start, end: i, text: char });
    }
  }
  return tokens;
}

/**
 * The spans of the given references (as the parser named them) in the text. Returns undefined when one of
 * them cannot be found: the caller refuses the expression rather than leave a reference unqualified.
 */
export function genericColumnSpans(text: string, names: string[][], family: Exclude<SqlFamily, 'postgres'>): ColumnReference[] | undefined {
  const wanted = new Set(names.map(keyOf));
  const tokens = tokenize(text, family);
  const found: ColumnReference[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const first = tokens[i] as Token;
    if (first.kind !== 'name' || tokens[i - 1]?.kind === 'dot') continue;
    const parts = [first.text];
    let last = i;
    while (tokens[last + 1]?.kind === 'dot' && tokens[last + 2]?.kind === 'name') {
      last += 2;
      parts.push((tokens[last] as Token).text);
    }
    const key = keyOf(parts);
    if (tokens[last + 1]?.kind !== 'open' && wanted.has(key)) {
      found.push({ parts, start: first.start, end: (tokens[last] as Token).end });
      seen.add(key);
    }
    i = last;
  }
  return [...wanted].every((key) => seen.has(key)) ? found : undefined;
}

/** These databases compare unquoted names case-insensitively, so chains match the parser's names so too. */
function keyOf(parts: string[]): string {
  return parts.map((part) => part.toLowerCase()).join('\u0000');
}
