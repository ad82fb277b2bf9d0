import restify from 'restify';
import { parseDocument } from 'yaml';
import { YAML_PARSE_OPTIONS } from '../config/yaml-source.js';
import { InputError, UnsupportedMediaTypeError } from '../errors.js';

export const JSON_MEDIA_TYPES: readonly string[] = ['application/json'];
export const YAML_MEDIA_TYPES: readonly string[] = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** Deeper documents than this are refused: nothing legitimate nests that far, and walkers recurse. */
const MAX_DEPTH = 64;

function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return depth;
  let deepest = depth;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, depth + 1));
  return deepest;
}

/** Parses a request body of one of the accepted media types; anything else is 415, a bad document 400. */
export function parseBody(contentType: string | undefined, raw: Buffer | string | undefined): unknown {
  const text = raw === undefined ? '' : raw.toString();
  if (text.trim() === '') return undefined;
  const mediaType = mediaTypeOf(contentType);
  let value: unknown;
  if (JSON_MEDIA_TYPES.includes(mediaType) || mediaType.endsWith('+json')) {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new InputError('invalid_body', `the body is not valid JSON: ${(error as Error).message}`);
    }
  } else if (YAML_MEDIA_TYPES.includes(mediaType)) {
    const doc = parseDocument(text, YAML_PARSE_OPTIONS);
    const syntax = doc.errors[0];
    if (syntax) throw new InputError('invalid_body', `the body is not valid YAML: ${syntax.message.split('\n')[0]}`);
    try {
      value = doc.toJS({ maxAliasCount: YAML_PARSE_OPTIONS.maxAliasCount });
    } catch (error) {
      throw new InputError('invalid_body', `the body is not valid YAML: ${(error as Error).message}`);
    }
  } else {
    throw new UnsupportedMediaTypeError('unsupported_media_type', `unsupported media type "${mediaType || '(none)'}"; send ${[...JSON_MEDIA_TYPES, ...YAML_MEDIA_TYPES].join(', ')}`);
  }
  if (depthOf(value) > MAX_DEPTH) throw new InputError('invalid_body', `the body nests deeper than ${MAX_DEPTH} levels`);
  return value;
}

/**
 * Handlers for routes that take a body: restify reads it (413 past `maxBytes`), then it is parsed as JSON
 * or YAML into `req.body`.
 */
export function bodyHandlers(maxBytes: number): restify.RequestHandler[] {
  return [
    restify.plugins.bodyReader({ maxBodySize: maxBytes }),
    (req, _res, next) => {
      try {
        req.body = parseBody(req.headers['content-type'], req.body as Buffer | string | undefined);
        next();
      } catch (error) {
        next(error as Error);
      }
    },
  ];
}
