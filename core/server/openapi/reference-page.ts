import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A file the reference page loads: its bytes and media type. */
export interface PageAsset {
  body: Buffer;
  contentType: string;
}

/** The files of swagger-ui-dist the page uses; nothing else of the package is served. */
const PACKAGE_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** The page's own script, kept out of the HTML so that the page's CSP needs no inline script. */
export const INIT_SCRIPT = 'reference-page.js';

/**
 * Swagger UI's settings. `validatorUrl: null`: by default it sends the document to validator.swagger.io
 * for a badge; with it off, and no web fonts in its CSS, the page asks nothing of another host.
 */
function initScript(documentUrl: string): string {
  return `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(documentUrl)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
  });
});
`;
}

/** The page: swagger-ui from the package, served under `assetsPath`. */
export function referencePageHtml(assetsPath: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vdb-service API reference</title>
<link rel="stylesheet" href="${assetsPath}/swagger-ui.css">
<link rel="icon" type="image/png" href="${assetsPath}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${assetsPath}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assetsPath}/swagger-ui-bundle.js"></script>
<script src="${assetsPath}/${INIT_SCRIPT}"></script>
</body>
</html>
`;
}

/**
 * The page's Content-Security-Policy: everything from this host only, so that a browser refuses any
 * request elsewhere should a later swagger-ui start one. Swagger UI sets inline styles and shows data: images.
 */
export const REFERENCE_PAGE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The version of swagger-ui-dist: the assets' ETag, as they change only with it. */
export const ASSETS_VERSION = (JSON.parse(readFileSync(join(packageFolder(), 'package.json'), 'utf8')) as { version: string }).version;

function packageFolder(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** Package files read so far: they never change while the process runs. */
const packageFiles = new Map<string, Buffer>();

/**
 * An asset of the page by file name, the package's read once on first use (swagger-ui-bundle.js is about
 * 1.7 MB); undefined for any name not served. The page's script reads the document at `documentUrl`.
 */
export function pageAsset(name: string, documentUrl: string): PageAsset | undefined {
  if (name === INIT_SCRIPT) return { body: Buffer.from(initScript(documentUrl)), contentType: 'text/javascript; charset=utf-8' };
  const contentType = Object.hasOwn(PACKAGE_FILES, name) ? PACKAGE_FILES[name] : undefined;
  if (contentType === undefined) return undefined;
  let body = packageFiles.get(name);
  if (!body) packageFiles.set(name, (body = readFileSync(join(packageFolder(), name))));
  return { body, contentType };
}
