import { ExponentialBackoff, handleWhen, isTaskCancelledError, retry, timeout, TimeoutStrategy, wrap } from 'cockatiel';
import ky from 'ky';
import { messageOf, DEFAULT_MAX_FILE_BYTES, MODULE_MEDIA_TYPE, ProviderError, type ModuleFile, type ModuleReader, type SemanticProvider } from '../../core/plugin-api/index.js';

export interface HttpProviderSettings {
  /** Limit of one attempt to fetch one file. */
  timeoutMs: number;
  /** Attempts after the first for a failure that may pass: a network error, a timeout, 408, 429, 5xx. */
  retries: number;
  maxFileBytes?: number;
}

/** A failure worth another attempt. */
class TransientError extends Error {}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '[::1]']);

/** Plain HTTP is accepted only where nothing can listen in between: the loopback interface. */
function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname) || /^127(\.\d{1,3}){3}$/.test(url.hostname);
}

function parseModuleUrl(uri: string): { manifest: URL; base: URL } {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ProviderError('provider.uri_invalid', `"${uri}" is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) {
    throw new ProviderError('provider.uri_invalid', `${url.protocol}//${url.host} is not allowed: use https (plain http only on a loopback address)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ProviderError('provider.uri_invalid', 'the URL must not carry credentials: they would show in diagnostics and logs');
  }
  const manifest = url.pathname.endsWith('/') ? new URL('manifest.yaml', url) : url;
  return { manifest, base: new URL('.', manifest) };
}

/** Reads the body, refusing one longer than `max` bytes without buffering more than that. */
async function boundedBody(response: Response, url: string, max: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > max) throw new ProviderError('module.file_too_large', `${url} has ${declared} bytes, more than ${max}`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
    size += chunk.value.byteLength;
    if (size > max) {
      await reader?.cancel();
      throw new ProviderError('module.file_too_large', `${url} is larger than ${max} bytes`);
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks);
}

/**
 * Modules served over HTTPS: `semantic.provider.uri` is the URL of the module's manifest.yaml (or of its
 * folder, ending in `/`); documents are fetched relative to it. Each file is fetched once, at startup, with
 * a timeout per attempt and retries with exponential backoff (cockatiel); ky does the requests.
 */
export function httpProvider(id: string, settings: HttpProviderSettings): SemanticProvider {
  const maxFileBytes = settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const policy = wrap(
    retry(handleWhen((error) => error instanceof TransientError || isTaskCancelledError(error)), {
      maxAttempts: settings.retries,
      backoff: new ExponentialBackoff({ initialDelay: 200, maxDelay: 2000 }),
    }),
    timeout(settings.timeoutMs, TimeoutStrategy.Aggressive),
  );

  async function fetchOnce(url: string, signal: AbortSignal): Promise<ModuleFile | undefined> {
    let response: Response;
    try {
      response = await ky.get(url, { signal, timeout: false, retry: 0, throwHttpErrors: false, headers: { accept: `${MODULE_MEDIA_TYPE}, application/yaml, application/json;q=0.9, */*;q=0.1` } });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new TransientError(messageOf((error as { cause?: unknown }).cause ?? error));
    }
    if (response.status === 404 || response.status === 410) return undefined;
    if (response.status === 408 || response.status === 429 || response.status >= 500) throw new TransientError(`answered ${response.status}`);
    if (!response.ok) throw new ProviderError('provider.unreachable', `${url} answered ${response.status}`);
    const mediaType = response.headers.get('content-type');
    return { bytes: await boundedBody(response, url, maxFileBytes), ...(mediaType ? { mediaType } : {}) };
  }

  async function fetchFile(url: string): Promise<ModuleFile | undefined> {
    try {
      return await policy.execute(({ signal }) => fetchOnce(url, signal));
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      const reason = isTaskCancelledError(error) ? `no answer within ${settings.timeoutMs} ms` : messageOf(error);
      throw new ProviderError('provider.unreachable', `${url}: ${reason} (${settings.retries + 1} attempts)`, { cause: error });
    }
  }

  return {
    id,
    mediaTypes: [MODULE_MEDIA_TYPE],
    async open(request): Promise<ModuleReader> {
      const { manifest, base } = parseModuleUrl(request.uri);
      const urlOf = (path: string) => (path === 'manifest.yaml' ? manifest.href : new URL(path, base).href);
      return {
        describe: urlOf,
        read: (path) => fetchFile(urlOf(path)),
      };
    },
  };
}
