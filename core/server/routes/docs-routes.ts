import type { Request, Response } from 'restify';
import { NotFoundError } from '../../plugin-api/errors.js';
import { errorResponses } from '../openapi/error-responses.js';
import { NO_AUTH, pathParameter } from '../openapi/operation-parts.js';
import { ASSETS_VERSION, pageAsset, REFERENCE_PAGE_CSP, referencePageHtml } from '../openapi/reference-page.js';
import type { RouteModule } from '../route-module.js';
import { OPENAPI_PATH } from './openapi-routes.js';

/** The reference page; the index points here. */
export const DOCS_PATH = '/docs';
const ASSETS_PATH = `${DOCS_PATH}/assets`;

/**
 * `GET /docs`: the API reference page (swagger-ui, served from the swagger-ui-dist package under
 * `/docs/assets/`), reading `GET /api/v1/openapi.json`. No authentication; the page asks no other host for
 * anything (core/server/openapi/reference-page.ts).
 */
export const docsRoutes: RouteModule = {
  name: 'docs',
  listener: 'main',
  register(server) {
    const html = referencePageHtml(ASSETS_PATH);
    server.get(DOCS_PATH, async (_req: Request, res: Response) => {
      res.header('Content-Type', 'text/html; charset=utf-8');
      res.header('Content-Security-Policy', REFERENCE_PAGE_CSP);
      res.header('Cache-Control', 'no-cache');
      res.sendRaw(200, html);
    });
    const etag = `"swagger-ui-dist-${ASSETS_VERSION}"`;
    server.get(`${ASSETS_PATH}/:file`, async (req: Request, res: Response) => {
      const asset = pageAsset(String(req.params['file']), OPENAPI_PATH);
      if (!asset) throw new NotFoundError('not_found', 'no such asset of the reference page');
      res.header('Content-Type', asset.contentType);
      res.header('Cache-Control', 'public, max-age=86400');
      res.header('ETag', etag);
      if (req.header('if-none-match') === etag) {
        res.status(304);
        res.end();
        return;
      }
      res.sendRaw(200, asset.body);
    });
  },
  describe() {
    const notFound = errorResponses({ standard: ['not_found', 'startup_blocked'] });
    return [
      {
        method: 'get',
        path: DOCS_PATH,
        operation: {
          operationId: 'getReferencePage',
          summary: 'This reference, as a page',
          tags: ['discovery'],
          security: NO_AUTH,
          responses: { '200': { description: 'The HTML page.', content: { 'text/html': { schema: { type: 'string' } } } }, ...errorResponses({ standard: ['startup_blocked'] }) },
        },
      },
      {
        method: 'get',
        path: `${ASSETS_PATH}/{file}`,
        operation: {
          operationId: 'getReferencePageAsset',
          summary: 'A script, style sheet or icon of the reference page',
          tags: ['discovery'],
          security: NO_AUTH,
          parameters: [pathParameter('file', 'The file name, e.g. `swagger-ui.css`.')],
          responses: { '200': { description: 'The file.' }, '304': { description: 'Unchanged since the `If-None-Match` tag.' }, ...notFound },
        },
      },
    ];
  },
};
