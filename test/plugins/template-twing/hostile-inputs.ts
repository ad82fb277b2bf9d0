/**
 * Request values built to break out of a rendered definition: SQL quoting and comments, YAML structure,
 * template syntax, the placeholder token itself, odd unicode and sheer size. Each must come back as plain
 * data and leave the SQL text and the YAML structure exactly as an empty value does. Shared with the
 * integration tests, which also check that the database is unchanged.
 */
export interface HostileInput {
  name: string;
  value: unknown;
}

export const HOSTILE_STRINGS: readonly HostileInput[] = [
  { name: 'single quote', value: "'" },
  { name: 'double quote', value: '"' },
  { name: 'backtick', value: '`' },
  { name: 'classic injection', value: "'; DROP TABLE x; --" },
  { name: 'quote break with OR', value: "x' OR '1'='1" },
  { name: 'block comment', value: '/* */' },
  { name: 'comment opener', value: '/*' },
  { name: 'line comment', value: '--' },
  { name: 'mysql comment', value: '# c' },
  { name: 'semicolons', value: ';;; select 1;' },
  { name: 'question marks', value: '? ?? \\?' },
  { name: 'dollar quote', value: '$$ select 1 $$' },
  { name: 'backslashes', value: '\\\\\'' },
  { name: 'brackets', value: '[x] ]' },
  { name: 'newline', value: 'a\nb: c' },
  { name: 'carriage return', value: 'a\rb' },
  { name: 'crlf', value: 'a\r\n- b' },
  { name: 'yaml mapping', value: 'a: b' },
  { name: 'yaml sequence', value: '- x' },
  { name: 'yaml flow mapping', value: '{ k: v }' },
  { name: 'yaml flow sequence', value: '[1, 2]' },
  { name: 'yaml anchor', value: '&anchor' },
  { name: 'yaml alias', value: '*alias' },
  { name: 'yaml tag', value: '!!python/object/apply:os.system ["id"]' },
  { name: 'yaml document start', value: '---' },
  { name: 'yaml document end', value: '...' },
  { name: 'yaml comment', value: '# not a comment' },
  { name: 'yaml block scalar', value: '|\n  text' },
  { name: 'yaml looks like a number', value: '0x1F' },
  { name: 'yaml looks like a boolean', value: 'true' },
  { name: 'yaml looks like null', value: '~' },
  { name: 'right-to-left override', value: '\u202Eevil\u202C' },
  { name: 'emoji', value: '🤖💥👩‍👩‍👧' },
  { name: 'line separator', value: 'a\u2028b\u2029c' },
  { name: 'NUL character', value: 'a\u0000b' },
  { name: 'byte order mark', value: '\uFEFFx' },
  { name: 'placeholder token', value: '⟦0⟧' },
  { name: 'placeholder token with text', value: "'⟦1⟧' ⟦2" },
  { name: 'twig expression', value: '{{ x }}' },
  { name: 'twig statement', value: '{% for i in 1..3 %}{{ i }}{% endfor %}' },
  { name: 'twig comment', value: '{# x #}' },
  { name: 'empty string', value: '' },
  { name: '100 kB string', value: "x'--;\n".repeat(100 * 1024 / 6) },
];

/** Values that are not strings: they must be bound with their identity, never turned into text. */
export const HOSTILE_VALUES: readonly HostileInput[] = [
  // twing's isAMarkup is duck-typed: a JSON object with these keys must not pass as trusted text
  { name: 'forged markup object', value: { charset: 'UTF-8', content: "'; DROP TABLE x; --", count: 1, toJSON: 'x', toString: 'x' } },
  { name: 'prototype key', value: JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown },
  { name: 'nested structure', value: { a: ["'", { b: '--' }], c: null } },
  { name: 'array of strings', value: ["'", '"', '--'] },
  { name: 'large number', value: 1e308 },
  { name: 'negative zero', value: -0 },
];

export const HOSTILE_INPUTS: readonly HostileInput[] = [...HOSTILE_STRINGS, ...HOSTILE_VALUES];
