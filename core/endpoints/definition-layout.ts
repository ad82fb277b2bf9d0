import { PLACEHOLDER_CLOSE, PLACEHOLDER_OPEN } from './bound-text.js';
import { DefinitionError } from './definition-error.js';
import type { DefinitionSource } from '../plugin-api/template-engine.js';

/** The line between header and body; YAML would read it as a document start, so it is blanked. */
const SEPARATOR = /^---[ \t]*(?=\r?\n|$)/m;

export interface DefinitionLayout {
  /** Header and body as one template, the `---` line blank: template line numbers are file lines. */
  template: string;
  /** The file line of `---`; 0 when the file has none and is all body. */
  separatorLine: number;
}

/**
 * Lays out a definition file for compiling as one template.
 * @throws DefinitionError when the file uses the reserved placeholder brackets.
 */
export function layoutDefinition(definition: DefinitionSource): DefinitionLayout {
  const { file, source } = definition;
  const reserved = [PLACEHOLDER_OPEN, PLACEHOLDER_CLOSE].map((char) => source.indexOf(char)).filter((at) => at >= 0);
  if (reserved.length > 0) {
    throw new DefinitionError({
      file,
      line: lineAt(source, Math.min(...reserved)),
      message: `the characters ${PLACEHOLDER_OPEN} and ${PLACEHOLDER_CLOSE} are reserved for bound values`,
    });
  }
  const separator = SEPARATOR.exec(source);
  if (!separator) return { template: source, separatorLine: 0 };
  return {
    template: source.slice(0, separator.index) + source.slice(separator.index + separator[0].length),
    separatorLine: lineAt(source, separator.index),
  };
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
