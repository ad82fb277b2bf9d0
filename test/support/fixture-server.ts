import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

export interface ServeOptions {
  /** Answer every request with this status. */
  status?: number;
  contentType?: string;
  /** Hold every request this long before answering. */
  delayMs?: number;
  /** Answer the first n requests 503, then serve normally. */
  failFirst?: number;
}

export interface FixtureServer {
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** A static file server on 127.0.0.1 and a free port, for the http provider's tests. */
export async function serveFolder(root: string, options: ServeOptions = {}): Promise<FixtureServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://fixture').pathname);
    requests.push(path);
    const send = (status: number, body: string | Buffer, headers: Record<string, string> = {}) => {
      // The test may have closed the server while this answer waited.
      if (res.destroyed) return;
      res.writeHead(status, headers);
      res.end(body);
    };
    const answer = async () => {
      if (options.status) return send(options.status, 'unavailable');
      if (requests.length <= (options.failFirst ?? 0)) return send(503, 'try again');
      const file = normalize(join(root, path));
      const body = file.startsWith(root) ? await readFile(file).catch(() => undefined) : undefined;
      if (!body) return send(404, 'not found');
      return send(200, body, { 'content-type': options.contentType ?? 'application/yaml' });
    };
    setTimeout(() => void answer(), options.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
