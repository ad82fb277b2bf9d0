/**
 * Where column references sit in the text of an expression parsed by node-sql-parser. The parser says
 * which references an expression holds but not reliably where (T-SQL nodes carry no location), so a small
 * lexer finds the dotted name chains outside strings and comments, and a chain counts as a reference when
 * the parser reported its name and it is not a function call.
 */
import type { ColumnReference } from '../plugin-api/sql-grammar.js';
import type { SqlLexicon } from '../plugin-api/sql-syntax.js';

interface Token {
  kind: 'name' | 'dot' | 'open' | 'other';
  start: number;
  end: number;
  /** For names: the identifier without its quotes. */
  text: string;
}

const NAME_START = /[A-Za-z_@\u0080-\uffff]/;
const NAME_PART = /[A-Za-z0-9_@$#\u0080-\uffff]/;

/** The characters that open a quoted identifier in the lexicon, each with the one that closes it. */
function identifierQuotesOf(lexicon: SqlLexicon): Record<string, string> {
  return {
    ...(lexicon.doubleQuotes === 'identifier' ? { '"': '"' } : {}),
    ...(lexicon.backticks ? { '`': '`' } : {}),
    ...(lexicon.brackets ? { '[': ']' } : {}),
  };
}

function tokenize(text: string, lexicon: SqlLexicon): Token[] {
  const identifierQuotes = identifierQuotesOf(lexicon);
  // Only where backslashes always escape: the tokenizer does not look for E'...' prefixes.
  const backslashEscapes = lexicon.stringBackslash === 'always';
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
export function columnSpans(text: string, names: string[][], lexicon: SqlLexicon): ColumnReference[] | undefined {
  const wanted = new Set(names.map(keyOf));
  const tokens = tokenize(text, lexicon);
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

/** The parser reports names as written, not folded: chains match them without regard to case. */
function keyOf(parts: string[]): string {
  return parts.map((part) => part.toLowerCase()).join('\u0000');
}
