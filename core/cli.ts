#!/usr/bin/env node
import { formatProblem, messageOf, StartupError } from './plugin-api/errors.js';
import { semanticCommand } from './commands/scaffold-command.js';
import { startCommand } from './commands/start-command.js';
import { validateCommand } from './commands/validate-command.js';

const USAGE = `usage: vdb-service <command> [--config FILE] [--port N] [--strict]

commands:
  start      serve the descriptor bundle (config: --config FILE, else $VDB_CONFIG, else ./service.yaml;
             port: --port N, else $PORT, else server.port)
  validate   load config, plugins and bundle, introspect, and print every problem as file:line: message
  semantic scaffold <vdb> <version> [--out DIR]
             write the catalog-derived starter model of a VDB as a semantic module`;

/** Prints a startup failure as plain lines on stderr: one per problem, never a stack. */
function reportStartupFailure(error: unknown): void {
  if (error instanceof StartupError && error.problems.length > 0) {
    for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
  } else {
    process.stderr.write(`${messageOf(error)}\n`);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'start') return await startCommand(rest);
    if (command === 'validate') return await validateCommand(rest);
    if (command === 'semantic') return await semanticCommand(rest);
  } catch (error) {
    reportStartupFailure(error);
    return 1;
  }
  process.stderr.write(`${USAGE}\n`);
  return command === undefined || command === '--help' ? 0 : 2;
}

process.exitCode = await main(process.argv.slice(2));
