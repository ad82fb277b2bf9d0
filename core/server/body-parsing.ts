import type { IncomingMessage } from 'node:http';
import { parseDocument } from 'yaml';
import { YAML_PARSE_OPTIONS } from '../config/yaml-source.js';
import { InputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../plugin-api/errors.js';

export const JSON_MEDIA_TYPES: readonly string[] = ['application/json'];
export const YAML_MEDIA_TYPES: readonly string[] = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** Deeper documents than this are refused: nothing legitimate nests that far, and walkers recurse. */
const MAX_DEPTH = 64;

function mediaTypeOf(header: string | undefined): string {
  // the header almost every client sends, as it is: no split, trim and lower-casing per request
  if (header === 'application/json') return header;
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
  // only a text that starts with white space can be blank (`\s` is the set trim removes): no copy otherwise
  if (text.length === 0 || (/^\s/.test(text) && text.trim() === '')) return undefined;
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
 * Reads and parses a request body of at most `maxBytes` (413 `body_too_large` beyond, without reading
 * further), as JSON or YAML by its media type. One await in the route's own handler: a restify plugin chain
 * (reader, then parser) costs more than the small bodies of these routes.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.once('error', reject);
  });
  return parseBody(req.headers['content-type'], raw);
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError('body_too_large', `the request body is larger than ${maxBytes} bytes`);
}
