import { configFileFrom } from '../config/config-loader.js';
import { formatProblem } from '../plugin-api/errors.js';
import { prepareService } from '../service.js';
import { coreTokens } from '../service-tokens.js';

/**
 * `vdb-service validate [--config FILE]`: loads config, plugins and bundle, introspects, checks the database
 * roles the operator manages, prints every problem as `file:line: message`, and exits 1 when startup would be
 * blocked. It writes nothing to a database.
 */
export async function validateCommand(argv: string[]): Promise<number> {
  const service = await prepareService({ configFile: configFileFrom(argv, process.env), env: process.env, checkOnly: true });
  await service.close();
  const semantic = service.container.resolve(coreTokens.semantic);
  // An isolated semantic failure is a warning (the service would still serve); a blocking one an error.
  for (const problem of semantic.problems(service.config.descriptors)) {
    process.stderr.write(`${formatProblem(problem)}${problem.severity === 'warning' ? ' (warning: isolated by policy)' : ''}\n`);
  }
  for (const warning of [...service.roleWarnings, ...service.endpointWarnings]) process.stderr.write(`${formatProblem(warning)} (warning)\n`);
  if (semantic.startupBlocked) return 1;
  process.stdout.write(`ok: ${service.config.file} and its bundle are valid\n`);
  return 0;
}
