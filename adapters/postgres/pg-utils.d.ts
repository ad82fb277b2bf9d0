/** pg's own module of helpers (exported as `pg/lib/*`), which @types/pg does not describe. */
declare module 'pg/lib/utils.js' {
  const utils: {
    /** How pg turns a bound value into the text it sends (Date, Buffer, array, object as JSON, toPostgres). */
    prepareValue(value: unknown): unknown;
  };
  export default utils;
}
