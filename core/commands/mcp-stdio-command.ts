/**
 * `vdb-service mcp-stdio --url URL --token-env NAME`: a stdio MCP server for clients that only start local
 * processes (Claude Desktop), forwarding every message to the service's Streamable HTTP endpoint with the
 * token read from the environment variable NAME (never from the command line, which other users can list).
 * Both sides are the SDK's transports; the bridge only relays messages.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export const MCP_STDIO_USAGE = 'vdb-service mcp-stdio --url URL --token-env NAME';

function option(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index < 0 ? undefined : args[index + 1];
}

/** Relays until stdin ends or the endpoint goes away; 2 on bad arguments. */
export async function mcpStdioCommand(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const url = option(args, '--url');
  const tokenEnv = option(args, '--token-env');
  const token = tokenEnv === undefined ? undefined : env[tokenEnv];
  if (url === undefined || tokenEnv === undefined || !URL.canParse(url)) {
    process.stderr.write(`usage: ${MCP_STDIO_USAGE}\n`);
    return 2;
  }
  if (token === undefined || token === '') {
    process.stderr.write(`mcp-stdio: the environment variable ${tokenEnv} holds no token\n`);
    return 2;
  }
  const http = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const stdio = new StdioServerTransport();
  /** The requests on their way to the endpoint: a client that closes stdin right after sending still gets their answers. */
  const forwarding = new Set<Promise<void>>();
  let closing = false;
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  // one way out, whichever side ends first: each transport's close calls its onclose, so closing the other side
  // from there without this guard would go back and forth for ever
  const shutdown = async (endSession: boolean): Promise<void> => {
    if (closing) return;
    closing = true;
    if (endSession) {
      await Promise.allSettled(forwarding);
      await http.terminateSession().catch(() => undefined);
    }
    await http.close();
    await stdio.close();
    closed();
  };
  stdio.onclose = () => void shutdown(true);
  http.onclose = () => void shutdown(false);
  // the stdin of a client that has gone ends the bridge (the SDK's stdio transport does not close on it)
  process.stdin.once('end', () => void shutdown(true));
  http.onmessage = (message) => {
    // later requests carry the negotiated version, as the SDK's own client sends it
    const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    if (typeof version === 'string') http.setProtocolVersion(version);
    void stdio.send(message);
  };
  http.onerror = (error) => process.stderr.write(`mcp-stdio: ${error.message}\n`);
  stdio.onmessage = (message) => {
    const forwarded = http.send(message).catch((error: unknown) => {
      process.stderr.write(`mcp-stdio: ${error instanceof Error ? error.message : String(error)}\n`);
      const id = (message as { id?: unknown }).id;
      // a request that could not be forwarded still gets its answer: the client would wait for it forever
      if (typeof id === 'string' || typeof id === 'number') {
        void stdio.send({ jsonrpc: '2.0', id, error: { code: -32000, message: `the MCP endpoint did not answer: ${error instanceof Error ? error.message : String(error)}` } } as JSONRPCMessage);
      }
    });
    forwarding.add(forwarded);
    void forwarded.finally(() => forwarding.delete(forwarded));
  };
  await http.start();
  await stdio.start();
  await done;
  return 0;
}
