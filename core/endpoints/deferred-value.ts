/** `<variable>.<field>[.<field>...]`: a context variable set by an earlier operation, then a path into it. */
const CONTEXT_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/;

/**
 * A value the template could not know: `deferValueProcessing(contextVar='order.id')` yields one, and the
 * action engine resolves it when the operation runs, once `order` exists in the action context.
 */
export class DeferredValue {
  /** `order.id` as written. */
  readonly contextVar: string;
  /** The context variable, e.g. `order`. */
  readonly variable: string;
  /** The path inside it, e.g. `['id']`. */
  readonly path: readonly string[];

  constructor(contextVar: string) {
    if (!DeferredValue.isValidPath(contextVar)) {
      throw new TypeError(`deferValueProcessing: contextVar must look like "<variable>.<field>", got ${JSON.stringify(contextVar)}`);
    }
    const [variable, ...path] = contextVar.split('.') as [string, ...string[]];
    this.contextVar = contextVar;
    this.variable = variable;
    this.path = Object.freeze(path);
    Object.freeze(this);
  }

  static isValidPath(candidate: unknown): candidate is string {
    return typeof candidate === 'string' && CONTEXT_PATH.test(candidate);
  }

  /** Reads the value from the action context; undefined while the variable or field does not exist. */
  resolveIn(context: Readonly<Record<string, unknown>>): unknown {
    let current: unknown = Object.hasOwn(context, this.variable) ? context[this.variable] : undefined;
    for (const key of this.path) {
      if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
      current = (current as Record<string, unknown>)[key];
    }
    return current;
  }
}
