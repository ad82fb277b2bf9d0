/**
 * Window functions in the model's own fields and metrics (Foundation §4.3, §6.10). A windowed metric is
 * computed like a measure expression: its aggregates at the query's grain, its window over the merged rows
 * (§6.10.5). A windowed field is computed in a derived table of its dataset's rows, before any join or
 * filter of the query, so its window sees each row of its dataset once (§6.10.3, §6.10.4).
 */
import type { PackageField, PackageMetric } from '../plugin-api/semantic-package.js';
import { nodesOf, type Expr } from './expression-ast.js';
import { parseExpression } from './expression-parser.js';

/** A window is written `OVER (`; text without it holds none, and is not parsed again. */
const OVER = /\bOVER\s*\(/i;

const metricWindows = new WeakMap<PackageMetric, Expr | null>();

/** The parsed expression of a metric that holds a window; undefined for any other metric. */
export function windowedMetric(metric: PackageMetric): Expr | undefined {
  let known = metricWindows.get(metric);
  if (known === undefined) {
    const expression = OVER.test(metric.expression) ? parseExpression(metric.expression, `metric ${metric.name}`) : undefined;
    known = expression && [...nodesOf(expression)].some((node) => node.kind === 'call' && node.window !== undefined) ? expression : null;
    metricWindows.set(metric, known);
  }
  return known ?? undefined;
}

/**
 * Whether a field's expression holds a window. Judged on its text: a literal that merely reads `over (`
 * only moves the field into the derived table, where its value is the same.
 */
export function isWindowedField(field: PackageField): boolean {
  return field.column === null && OVER.test(field.sql);
}

/** The column of the derived table that holds a windowed field's value. */
export function windowColumn(field: PackageField): string {
  return `w__${field.name}`;
}
