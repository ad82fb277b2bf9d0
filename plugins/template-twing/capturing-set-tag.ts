import { createNode, createSetTagHandler, type TwingParser, type TwingSynchronousEnvironment } from 'twing';

/**
 * `{% set cols %}id, name{% endset %}` holds template text, like any captured block. twing's set node
 * turns a capture of plain text into an assignment of a string constant, which the bound-value executor could
 * not tell from `{% set cols = x %}`. This tag handler wraps such text so the capture stays a capture.
 */
export function installCapturingSetTag(environment: TwingSynchronousEnvironment): void {
  const core = createSetTagHandler();
  environment.addTagHandler({
    tag: core.tag,
    initialize: (parser, level) => {
      // only the capture form parses a body: keep a lone text body from being recognised as one
      const subparse: TwingParser['subparse'] = (stream, tag, test) => {
        const body = parser.subparse(stream, tag, test);
        return body.type === 'text' ? createNode({ 0: body }, body.line, body.column) : body;
      };
      return core.initialize(new Proxy(parser, { get: (target, key) => (key === 'subparse' ? subparse : Reflect.get(target, key)) }), level);
    },
  });
}
