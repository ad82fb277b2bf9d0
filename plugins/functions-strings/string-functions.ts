import type { TemplateFunction } from '../../core/plugin-api/index.js';

/** null and absent stay null, so `{{ strings__upper(missing) }}` binds null as the variable itself would. */
function onText(transform: (text: string) => string): TemplateFunction {
  return (value) => (value === null || value === undefined ? null : transform(String(value)));
}

export const stringFunctions: Record<string, TemplateFunction> = {
  /** `Crème Brûlée!` → `creme-brulee`: lower case ASCII letters and digits joined by single dashes. */
  slugify: onText((text) =>
    text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')),
  upper: onText((text) => text.toUpperCase()),
  lower: onText((text) => text.toLowerCase()),
  trim: onText((text) => text.trim()),
};
