/**
 * ` (23505)` for a driver error with a short machine code (a SQLSTATE, an errno name such as
 * `ER_DUP_ENTRY`, an Oracle `NJS-500`); empty otherwise. The code tells an operator what the database said
 * without echoing its message, which may quote data or connection details.
 */
export function driverCodeSuffix(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_-]{1,40}$/.test(code) ? ` (${code})` : '';
}
