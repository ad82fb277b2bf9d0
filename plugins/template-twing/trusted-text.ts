import { createMarkup, isAMarkup, type TwingMarkup } from 'twing';
import { PLACEHOLDER_CLOSE, PLACEHOLDER_OPEN } from '../../core/plugin-api/index.js';

/*
 * Text the bound-value executor may splice into the output. twing's isAMarkup is duck-typed, so a request
 * object with the right keys would pass it: trust is the identity of markups made here, nothing else.
 */
const trusted = new WeakSet<TwingMarkup>();

/**
 * Output of the template itself (a captured `{% set %}` block, a macro, a block): text and placeholders.
 * twing returns a markup for macros and a string for `block()`.
 */
export function trustTemplateOutput(output: unknown): unknown {
  const markup = typeof output === 'string' ? createMarkup(output) : output;
  if (isAMarkup(markup)) trusted.add(markup);
  return markup;
}

/**
 * Text vouched for by a filter (`| identifier`, `| raw`). It may not hold placeholder brackets, or it could
 * point at another request's value.
 */
export function trustedText(text: string): TwingMarkup {
  if (text.includes(PLACEHOLDER_OPEN) || text.includes(PLACEHOLDER_CLOSE)) {
    throw new TypeError(`trusted text may not contain ${PLACEHOLDER_OPEN} or ${PLACEHOLDER_CLOSE}`);
  }
  const markup = createMarkup(text);
  trusted.add(markup);
  return markup;
}

export function isTrustedText(value: unknown): value is TwingMarkup {
  return typeof value === 'object' && value !== null && trusted.has(value as TwingMarkup);
}
