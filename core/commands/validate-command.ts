import { configFileFrom } from '../config/config-loader.js';
import { logDestination } from '../logging.js';
import { formatProblem } from '../plugin-api/errors.js';
import { prepareService } from '../service.js';
import { coreTokens } from '../service-tokens.js';

/**
 * `vdb-service validate [--config FILE] [--strict]`: loads config, plugins and bundle, introspects, checks the
 * database roles the operator manages, prints every problem on stdout as `file:line: message` (logs go to
 * stderr), and exits 1 when startup would be blocked, or with `--strict` on any semantic error, isolated by
 * policy or not (for CI). It writes nothing to a database.
 */
export async function validateCommand(argv: string[]): Promise<number> {
  const strict = argv.includes('--strict');
  // stdout is the list of problems, for people and scripts: the JSON logs go to stderr
  const service = await prepareService({
    configFile: configFileFrom(argv, process.env), env: process.env, logDestination: logDestination(2), checkOnly: true,
  });
  await service.close();
  const semantic = service.container.resolve(coreTokens.semantic);
  const problems = semantic.problems(service.config.descriptors);
  // An isolated semantic failure is a warning (the service would still serve) unless --strict; a blocking one an error.
  for (const problem of problems) {
    const isolated = problem.severity === 'warning' ? (strict ? ' (isolated by policy; an error with --strict)' : ' (warning: isolated by policy)') : '';
    process.stdout.write(`${formatProblem(problem)}${isolated}\n`);
  }
  for (const warning of [...service.roleWarnings, ...service.endpointWarnings]) process.stdout.write(`${formatProblem(warning)} (warning)\n`);
  if (semantic.startupBlocked || (strict && problems.length > 0)) return 1;
  process.stdout.write(`ok: ${service.config.file} and its bundle are valid\n`);
  return 0;
}
