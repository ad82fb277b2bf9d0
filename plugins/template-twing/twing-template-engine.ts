import {
  createSource, createSynchronousArrayLoader, createSynchronousEnvironment, createSynchronousFunction, createSynchronousTemplate,
  isATwingError as isTwingErrorObject, type TwingError, type TwingSynchronousEnvironment, type TwingSynchronousNodeExecutor, type TwingSynchronousTemplate,
} from 'twing';
import { DefinitionError, layoutDefinition, RenderedYamlCache, ServiceError, type CompiledDefinition, type DefinitionSource, type RenderContext, type RenderedDefinition, type TemplateEngine, type StartupProblem, type TemplateFunction, type TemplateFunctionModule } from '../../core/plugin-api/index.js';
import { createBoundValueExecutor } from './bound-value-executor.js';
import { installBuiltins } from './builtin-functions.js';
import { installCapturingSetTag } from './capturing-set-tag.js';
import { inspectDefinition } from './definition-inspection.js';
import { ActiveRender, RenderState } from './render-state.js';
import { straightLineValues, straightLineVariables, type FirstRender } from './straight-line.js';

/** The twing engine: one synchronous environment for every definition, templates compiled once. */
export function createTwingTemplateEngine(id: string): TemplateEngine {
  const active = new ActiveRender();
  // An empty loader: definitions are parsed from their source and may not load other templates.
  const environment = createSynchronousEnvironment(createSynchronousArrayLoader({}), { autoEscapingStrategy: 'sql' });
  environment.registerEscapingStrategy(() => {
    throw new Error('the sql strategy is applied by the bound-value executor, never as an escaper');
  }, 'sql');
  installBuiltins(environment, active);
  installCapturingSetTag(environment);
  const registerModules = moduleRegistrar(environment);
  const nodeExecutor = createBoundValueExecutor(active);
  const yamlCache = new RenderedYamlCache();

  return {
    id,
    compile(definition, functions) {
      registerModules(functions);
      const layout = layoutDefinition(definition);
      const template = parseDefinition(environment, definition.file, layout.template);
      const { warnings, variables } = inspectDefinition(template.ast, definition.file, layout.separatorLine);
      return new TwingCompiledDefinition(definition, template, { environment, nodeExecutor, active, yamlCache }, warnings, variables);
    },
  };
}

interface RenderMachinery {
  environment: TwingSynchronousEnvironment;
  nodeExecutor: TwingSynchronousNodeExecutor;
  active: ActiveRender;
  yamlCache: RenderedYamlCache;
}

class TwingCompiledDefinition implements CompiledDefinition {
  readonly name: string;
  readonly file: string;
  /** The variables of a straight-line definition in placeholder order (straight-line.ts); undefined otherwise. */
  private readonly straightLine: string[] | undefined;
  private first: FirstRender | undefined;

  constructor(
    definition: DefinitionSource,
    private readonly template: TwingSynchronousTemplate,
    private readonly machinery: RenderMachinery,
    readonly warnings: readonly StartupProblem[],
    readonly variables: readonly string[],
  ) {
    this.name = definition.name;
    this.file = definition.file;
    this.straightLine = straightLineVariables(template.ast);
  }

  render(fields: Readonly<Record<string, unknown>>, context: RenderContext): RenderedDefinition {
    const { environment, nodeExecutor, active, yamlCache } = this.machinery;
    if (this.straightLine && this.first) {
      const values = straightLineValues(this.straightLine, fields, environment.globals);
      if (values) return { document: this.first.document, values, origin: { file: this.file, lines: this.first.lines } };
    }
    const state = new RenderState(context);
    const variables = new Map<string, unknown>(Object.entries(fields));
    let text: string;
    try {
      text = active.run(state, () => this.template.render(environment, variables, { nodeExecutor, strict: false }));
    } catch (error) {
      throw renderFailure(error, this.file);
    }
    const body = yamlCache.parse(text);
    if (!body.ok) {
      const where = body.line === undefined ? '' : ` (rendered line ${body.line})`;
      throw new DefinitionError({ file: this.file, message: `the rendered body is not valid YAML${where}: ${body.message}` });
    }
    // the text holds no value, so its document stands for every request (the YAML cache froze it)
    if (this.straightLine?.length === state.values.length) this.first ??= { document: body.value, lines: Object.freeze(state.lines) };
    return { document: body.value, values: state.values, origin: { file: this.file, lines: state.lines } };
  }
}

function parseDefinition(environment: TwingSynchronousEnvironment, file: string, text: string): TwingSynchronousTemplate {
  const source = createSource(file, text);
  try {
    return createSynchronousTemplate(environment.parse(environment.tokenize(source)));
  } catch (error) {
    if (!isATwingError(error)) throw error;
    // an unclosed string or bracket is reported where the file ends; its opening line helps more
    const opened = /opened at \{(\d+):\d+\}/.exec(error.rootMessage);
    const line = opened ? Number(opened[1]) : error.location?.line;
    throw new DefinitionError({ file, line, message: error.rootMessage }, { cause: error });
  }
}

/**
 * A failure while rendering: the service's own errors (a bad identifier, a bad request value) pass through;
 * anything else becomes a DefinitionError at the template line where it happened.
 */
function renderFailure(error: unknown, file: string): Error {
  let cause = error;
  while (isATwingError(cause) && cause.previous !== undefined) cause = cause.previous;
  if (cause instanceof ServiceError || cause instanceof DefinitionError) return cause;
  const line = isATwingError(error) ? error.location?.line : undefined;
  const reason = isATwingError(cause) ? cause.rootMessage : cause instanceof Error ? cause.message : String(cause);
  return new DefinitionError({ file, line, message: `rendering failed: ${reason}` }, { cause: error });
}

/**
 * Registers each module function as twing function `<module>__<function>`. Its result is a value: a
 * function call is never a literal, so the bound-value executor captures it.
 */
function moduleRegistrar(environment: TwingSynchronousEnvironment): (modules: readonly TemplateFunctionModule[]) => void {
  const registered = new Map<string, TemplateFunction>();
  return (modules) => {
    for (const { module, functions } of modules) {
      for (const [name, fn] of Object.entries(functions)) {
        const qualified = `${module}__${name}`;
        const known = registered.get(qualified);
        if (known === fn) continue;
        if (known) throw new Error(`template function ${qualified} is registered twice with different implementations`);
        registered.set(qualified, fn);
        environment.addFunction(createSynchronousFunction(qualified, (_execution, ...args: unknown[]) => synchronousResult(qualified, fn(...args)), [], { is_variadic: true }));
      }
    }
  };
}

function isATwingError(candidate: unknown): candidate is TwingError {
  return candidate instanceof Error && isTwingErrorObject(candidate);
}

function synchronousResult(name: string, result: unknown): unknown {
  if (typeof (result as { then?: unknown } | null)?.then === 'function') throw new TypeError(`${name} returned a promise: template functions must be synchronous`);
  return result;
}
