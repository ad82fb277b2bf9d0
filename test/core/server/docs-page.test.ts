import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { projectRoot, startTestService, type TestService } from '../../support/test-service.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
const CHROMIUM = '/usr/bin/chromium';
/** Where the screenshot goes, for a person to look at the page. */
const OUTPUT = join(projectRoot, 'dist/test-output');

/** No update checks, sync, field trials or QUIC: a headless browser that itself asks nothing of the network. */
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/**
 * The browser, or why there is none: the suite is then reported skipped, never passed. Playwright gives
 * each launch a new empty profile of its own.
 */
async function launch(): Promise<Browser | string> {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is not installed (apt-get install -y chromium)`;
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  } catch (error) {
    return `${CHROMIUM} does not start: ${(error as Error).message.split('\n')[0]}`;
  }
}

const page = suite<{ service: TestService }>('GET /docs in headless Chromium');
const browser = await launch();

if (typeof browser === 'string') {
  console.log(`docs page suite skipped: ${browser}`);
  page.skip(`(${browser})`, () => undefined);
} else {
  page.before(async (context) => {
    context.service = await startTestService();
  });
  page.after(async ({ service }) => {
    await browser.close();
    await service?.close();
  });

  page('renders the operations from the package\'s assets, asks no other host, and is saved as a screenshot', async ({ service }) => {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const requested: string[] = [];
    const refusals: string[] = [];
    tab.on('request', (request) => requested.push(request.url()));
    tab.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) refusals.push(message.text());
    });
    const answer = await tab.goto(`${service.url}/docs`, { waitUntil: 'load' });
    assert.is(answer?.status(), 200);
    await tab.locator('.opblock').first().waitFor({ timeout: 30_000 });
    await tab.waitForLoadState('networkidle');
    // swagger-ui breaks paths with zero-width spaces after each slash
    const text = (await tab.locator('body').innerText()).replace(/\u200b/g, '');
    for (const expected of [
      '/api/v1/query/perform/customer_orders', 'Query customer_orders', '/api/v1/actions/run/place_order',
      '/api/v1/capabilities/{capability}/vdbs/{vdb}/versions/{version}/tasks', 'Run a task on one VDB version', '/observe/metrics',
    ]) assert.ok(text.includes(expected), `the page shows ${expected}`);
    assert.not.ok(text.includes('Failed to load API definition'));

    mkdirSync(OUTPUT, { recursive: true });
    const screenshot = join(OUTPUT, 'docs-page.png');
    await tab.screenshot({ path: screenshot, fullPage: false });
    console.log(`docs page screenshot: ${screenshot}`);

    const origin = new URL(service.url).origin;
    const foreign = requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
    assert.equal(foreign, [], 'every request of the page goes to the service itself');
    assert.ok(requested.includes(`${origin}/api/v1/openapi.json`), 'the page read the document');
    assert.ok(requested.includes(`${origin}/docs/assets/swagger-ui-bundle.js`), 'the page loaded swagger-ui from the service');
    assert.equal(refusals, [], 'the page tried nothing its Content-Security-Policy refuses');
    await tab.close();
  });
}

page.run();
