#!/usr/bin/env node
import { configFileFrom } from './config/config-loader.js';
import { formatProblem, messageOf, StartupError } from './plugin-api/errors.js';
import { semanticCommand } from './commands/scaffold-command.js';
import { prepareService, startService } from './service.js';
import { coreTokens } from './service-tokens.js';

const USAGE = `usage: vdb-service <command> [--config FILE]

commands:
  start      serve the descriptor bundle (config: --config FILE, else $VDB_CONFIG, else ./service.yaml)
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

async function start(argv: string[]): Promise<number> {
  const service = await startService({ configFile: configFileFrom(argv, process.env) });
  service.logger.info({ url: service.url, adminUrl: service.adminUrl }, 'vdb-service listening');
  const stop = (signal: string) => {
    service.logger.info({ signal }, 'shutting down: draining requests');
    void service.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return new Promise<number>(() => undefined);
}

async function validate(argv: string[]): Promise<number> {
  const service = await prepareService({ configFile: configFileFrom(argv, process.env), env: process.env });
  await service.close();
  const semantic = service.container.resolve(coreTokens.semantic);
  // An isolated semantic failure is a warning (the service would still serve); a blocking one an error.
  for (const problem of semantic.problems(service.config.descriptors)) {
    process.stderr.write(`${formatProblem(problem)}${problem.severity === 'warning' ? ' (warning: isolated by policy)' : ''}\n`);
  }
  for (const warning of service.endpointWarnings) process.stderr.write(`${formatProblem(warning)} (warning)\n`);
  if (semantic.startupBlocked) return 1;
  process.stdout.write(`ok: ${service.config.file} and its bundle are valid\n`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'start') return await start(rest);
    if (command === 'validate') return await validate(rest);
    if (command === 'semantic') return await semanticCommand(rest);
  } catch (error) {
    reportStartupFailure(error);
    return 1;
  }
  process.stderr.write(`${USAGE}\n`);
  return command === undefined || command === '--help' ? 0 : 2;
}

process.exitCode = await main(process.argv.slice(2));
