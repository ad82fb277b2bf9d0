#!/usr/bin/env node
import { formatProblem, messageOf, StartupError } from './plugin-api/errors.js';
import { mcpStdioCommand } from './commands/mcp-stdio-command.js';
import { semanticCommand } from './commands/scaffold-command.js';
import { startCommand } from './commands/start-command.js';
import { validateCommand } from './commands/validate-command.js';

const USAGE = `usage: vdb-service <command> [--config FILE] (else $VDB_CONFIG, else ./service.yaml)

commands:
  start [--port N]
             serve the descriptor bundle; the port: --port N, else $PORT, else server.port
  validate [--strict]
             load config, plugins and bundle, introspect, and print every problem on stdout as
             file:line: message; exit 1 when startup would fail (--strict: on any semantic error too)
  semantic scaffold <vdb> <version> [--out DIR]
             write the catalog-derived starter model of a VDB as a semantic module
  mcp-stdio --url URL --token-env NAME
             a stdio MCP server relaying to the service's MCP endpoint at URL, with the bearer
             token in the environment variable NAME (for clients that only start processes)`;

/** Prints a startup failure as plain lines, one per problem, never a stack: `validate` lists them on stdout. */
function reportStartupFailure(error: unknown, out: NodeJS.WritableStream): void {
  if (error instanceof StartupError && error.problems.length > 0) {
    for (const problem of error.problems) out.write(`${formatProblem(problem)}\n`);
  } else {
    out.write(`${messageOf(error)}\n`);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'start') return await startCommand(rest);
    if (command === 'validate') return await validateCommand(rest);
    if (command === 'semantic') return await semanticCommand(rest);
    if (command === 'mcp-stdio') return await mcpStdioCommand(rest);
  } catch (error) {
    reportStartupFailure(error, command === 'validate' && error instanceof StartupError ? process.stdout : process.stderr);
    return 1;
  }
  process.stderr.write(`${USAGE}\n`);
  return command === undefined || command === '--help' ? 0 : 2;
}

process.exitCode = await main(process.argv.slice(2));
