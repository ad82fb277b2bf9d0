import { FAILSAFE_SCHEMA, load, Type } from 'js-yaml';

/**
 * The kernel's schema (the `yaml` package's `core`: YAML 1.2 core, no merge keys, no timestamps) spelled as
 * js-yaml types, so both parsers give a plain scalar the same value. js-yaml's own CORE_SCHEMA differs at the
 * edges: it reads `0b11`, `-0x1F` and `+0o7` as numbers and `-.5`, `+.5`, `1e400` as strings.
 */
const scalarTypes: [tag: string, pattern: RegExp, construct: (text: string) => unknown][] = [
  ['null', /^(?:~|[Nn]ull|NULL)?$/, () => null],
  ['bool', /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (text) => text[0] === 't' || text[0] === 'T'],
  ['int', /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/,
    (text) => (text[1] === 'o' ? parseInt(text.slice(2), 8) : text[1] === 'x' ? parseInt(text.slice(2), 16) : parseInt(text, 10))],
  ['float', /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    (text) => {
      const end = text.slice(-3).toLowerCase();
      return end === 'nan' ? NaN : end === 'inf' ? (text[0] === '-' ? -Infinity : Infinity) : parseFloat(text);
    }],
];

const KERNEL_CORE_SCHEMA = FAILSAFE_SCHEMA.extend({
  implicit: scalarTypes.map(([tag, pattern, construct]) => new Type(`tag:yaml.org,2002:${tag}`, {
    kind: 'scalar',
    // `null` is the content of an empty node carrying an explicit tag: only `!!null` accepts it.
    resolve: (text: string | null) => (text === null ? tag === 'null' : pattern.test(text)),
    construct: (text: string | null) => (text === null ? null : construct(text)),
  })),
});

/**
 * Syntax that js-yaml does not read the way the kernel does, or that only the kernel bounds. A document that may
 * hold any of it is read by the kernel. The patterns look for an indicator where it could start a token, so they
 * also match inside quoted text, block scalars and comments (and `a : b`, `[{...}, {...}]`): such a document is
 * only read more slowly. Each alternative starts at its indicator character and looks back from there, which
 * keeps the scan of a 5 MB document at a few milliseconds.
 */
const KERNEL_SYNTAX = new RegExp([
  // An anchor (`&a`; aliases need one): the kernel bounds alias expansion (`maxAliasCount`), js-yaml does not.
  // A tag (`!!float 1`, `!<...>`): explicit tags resolve differently at the edges. An explicit key (`? `).
  /[&!?](?<![^\s[{,:][&!?])(?:(?<=&)[^\s[\]{},]|(?<=!)[!<]|(?<=\?)(?!\S))/,
  // A directive (`%YAML`, `%TAG`).
  /%(?<=^%)/,
  // A null or empty key (`~: x`, `null: x`, `: x`), or a flow collection as a key (`[a, b]: x`): the kernel names
  // them `""` and `[ a, b ]`, js-yaml `null` and `a,b`.
  /:(?:(?![^\s[\]{},])(?<=(?:^|[\s[{,])(?:~|null|Null|NULL)?:)|(?<=[\]}][ \t]*:))/,
  // A flow collection after `{` or `,`: a key without value in a flow mapping (`{ x: 1, [a] }`), or an entry of a
  // flow sequence (`[{...}, {...}]`).
  /[[{](?<=[{,]\s*[[{])/,
  // A comment touching a quote or a flow indicator (`"a"#c`, `[a,#c`): the kernel refuses it, js-yaml does not.
  /#(?<=["'[\]{},:]#)/,
  // An escaped line break followed by an empty line in double-quoted text: js-yaml drops the line feed.
  /\\(?=\r?\n[ \t]*\r?\n)/,
  // An empty block sequence entry (`-` alone on its line): js-yaml then accepts a less indented `- b` as the next
  // entry, which the kernel refuses.
  /-(?<=^[ \t]*-)(?=[ \t]*(?:#.*)?$)/,
].map((pattern) => pattern.source).join('|'), 'm');

/** js-yaml warns where the kernel refuses (continuation lines of a flow collection or quoted text indented too little). */
const refuseWarnings = (warning: Error): never => {
  throw warning;
};

/**
 * The value of one YAML document, read with js-yaml (about ten times faster than the kernel's parser on large
 * generated models, but without positions). `undefined` means: read this text with the kernel's parser instead,
 * because it has syntax of KERNEL_SYNTAX, or js-yaml refused it or warned (then the kernel's message and position
 * are the ones to report, as before). Duplicate keys are refused, as by the kernel.
 */
export function readYamlValue(text: string): { value: unknown } | undefined {
  if (KERNEL_SYNTAX.test(text)) return undefined;
  try {
    // An empty document is `undefined` to js-yaml and `null` to the kernel.
    return { value: load(text, { schema: KERNEL_CORE_SCHEMA, onWarning: refuseWarnings }) ?? null };
  } catch {
    return undefined;
  }
}
