/** Statements built to exhaust a parser or the authorizer's walk: each must get a clear 4xx, never a 500. */

/** `SELECT 1+1+…+1` with `terms` terms. */
export function manyTerms(terms: number): string {
  return `SELECT ${Array.from({ length: terms }, () => '1').join('+')}`;
}

/** `SELECT * FROM (SELECT * FROM (… SELECT 1 AS x …) a) a`, `depth` subqueries deep. */
export function nestedSubqueries(depth: number): string {
  let sql = 'SELECT 1 AS x';
  for (let level = 0; level < depth; level += 1) sql = `SELECT * FROM (${sql}) a`;
  return sql;
}

/** A statement of `characters` characters: one string literal. */
export function longText(characters: number): string {
  return `SELECT '${'x'.repeat(characters - 14)}' AS x`;
}
