import type { StartupProblem } from './errors.js';

/**
 * The contract of a `templateEngine` plugin. An endpoint definition file is a template whose output is YAML;
 * the engine compiles it once at startup and renders it per request so that no request value ever becomes
 * text: each `{{ expr }}` over request data prints a placeholder token and its value is captured
 * (see core/endpoints/bound-text.ts for the token and for turning text plus values into SQL or scalars).
 */
export interface TemplateEngine {
  /** The plugin id, e.g. `twing`. */
  readonly id: string;
  /**
   * Compiles one definition file (header, a `---` line, then the YAML body) with the built-in functions and
   * the given function modules (callable as `<module>__<function>`).
   * @throws DefinitionError with the file line on a syntax error or a forbidden construct.
   */
  compile(definition: DefinitionSource, functions: readonly TemplateFunctionModule[]): CompiledDefinition;
}

/** One endpoint definition file, as the template engine compiles it. */
export interface DefinitionSource {
  /** The endpoint name: the file name without extension. */
  name: string;
  /** The file as shown in messages (relative to the working directory). */
  file: string;
  /** The whole file text. */
  source: string;
}

/** What the service knows about a request; templates read it as `_context.<field>`. */
export interface RequestContext {
  /** The name of the VDB the definition names (its `virtualDatabase`). */
  vdb: string;
  requestId: string;
  caller: { subject: string };
  now: Date;
}

/** What a definition is rendered with besides the request fields. */
export interface RenderContext {
  _context: RequestContext;
  /**
   * Checks a name against the VDB catalog and returns it quoted for the dialect; throws when the name is
   * not a known relation or column. Backs the `| identifier` filter.
   */
  identifier(name: string): string;
}

/** An endpoint definition compiled once at startup, rendered per request. */
export interface CompiledDefinition {
  readonly name: string;
  readonly file: string;
  /** Problems worth a warning, e.g. each use of `| raw` (severity `warning`, with its line). */
  readonly warnings: readonly StartupProblem[];
  /** Every variable name the template reads (for checking `neededFields` against use). */
  readonly variables: readonly string[];
  /**
   * Renders with the request fields (an absent variable is null) and the request context. Synchronous and
   * cheap: the template is compiled, and the YAML of a rendered text is parsed once per text.
   * @throws DefinitionError when the rendered body is not valid YAML or the template fails.
   */
  render(fields: Readonly<Record<string, unknown>>, context: RenderContext): RenderedDefinition;
}

/** One render of a definition: the document with placeholder tokens and the captured values. */
export interface RenderedDefinition {
  /**
   * The body parsed as YAML (bounded options), with placeholder tokens still in its strings. Shared between
   * renders of the same text and deep-frozen: read it, never change it.
   */
  readonly document: unknown;
  /** The captured values by placeholder index. */
  readonly values: readonly unknown[];
  /** Where each placeholder came from, for messages that name the file line. */
  readonly origin: PlaceholderOrigin;
}

/** Where each placeholder of a rendered definition came from. */
export interface PlaceholderOrigin {
  file: string;
  /** `lines[i]`: the file line of the `{{ expr }}` that printed placeholder `i`. */
  lines: readonly number[];
}

/** A template function receives the call's arguments; it must not touch the template's context. */
export type TemplateFunction = (...args: unknown[]) => unknown;

/** What a `templateFunctions` plugin provides: functions callable in templates as `<module>__<name>`. */
export interface TemplateFunctionModule {
  /** The module name, equal to the manifest id. */
  module: string;
  functions: Record<string, TemplateFunction>;
}
