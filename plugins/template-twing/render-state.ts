import { placeholderToken, type RenderContext } from '../../core/plugin-api/index.js';

/** The state of one render: the values captured so far and the file line of each. */
export class RenderState {
  readonly values: unknown[] = [];
  readonly lines: number[] = [];

  constructor(readonly context: RenderContext) {}

  /** Records a value and returns the placeholder that stands for it in the text. */
  bind(value: unknown, line: number): string {
    this.lines.push(line);
    return placeholderToken(this.values.push(value) - 1);
  }
}

/**
 * The state of the render in progress. Rendering is synchronous, so one slot per engine is enough; filters
 * reach it here because twing hands them an execution context that macros and loops copy.
 */
export class ActiveRender {
  private current: RenderState | undefined;

  run<T>(state: RenderState, render: () => T): T {
    if (this.current) throw new Error('a definition render started inside another render');
    this.current = state;
    try {
      return render();
    } finally {
      this.current = undefined;
    }
  }

  get state(): RenderState {
    if (!this.current) throw new Error('this filter works only while a definition renders');
    return this.current;
  }
}
