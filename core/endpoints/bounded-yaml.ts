import { parseDocument } from 'yaml';
import { YAML_PARSE_OPTIONS } from '../config/yaml-source.js';

export type BoundedYamlResult = { ok: true; value: unknown } | { ok: false; message: string; line: number | undefined };

/** Parses YAML text with the service's bounds (aliases, duplicate keys, core schema); never throws. */
export function parseBoundedYaml(text: string): BoundedYamlResult {
  const doc = parseDocument(text, YAML_PARSE_OPTIONS);
  const syntax = doc.errors[0];
  if (syntax) return { ok: false, message: syntax.message.split('\n')[0] ?? 'invalid YAML', line: syntax.linePos?.[0].line };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: YAML_PARSE_OPTIONS.maxAliasCount }) };
  } catch (error) {
    return { ok: false, message: (error as Error).message, line: undefined };
  }
}
