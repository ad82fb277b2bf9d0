import type { ServiceConfig } from '../config/config-types.js';
import { formatProblem } from '../plugin-api/errors.js';
import { CORE_VERSION } from '../plugins/manifest-validation.js';
import type { SemanticRegistry } from '../semantic/semantic-registry.js';
import type { VdbActivation } from '../semantic/semantic-types.js';
import type { RunningService } from '../service.js';
import { coreTokens } from '../service-tokens.js';

/** The tokens service.yaml falls back to when VDB_ADMIN_TOKEN / VDB_ANALYST_TOKEN are unset: public, local use only. */
const DEMO_TOKEN = /^local-dev-[a-z]+-token$/;

/**
 * What a person starting the service needs to know, one fact a line (logs stay JSON, on stdout): where it
 * listens, the state of each VDB and, for a failed one, the first error as `file:line: message`, how many
 * queries, actions and capabilities it serves and, with the demo's built-in tokens only, those tokens.
 */
export function startupSummary(service: RunningService): string[] {
  const { config, container } = service;
  const semantic = container.resolve(coreTokens.semantic);
  const endpoints = container.resolve(coreTokens.endpoints).list();
  const lines = [`vdb-service ${CORE_VERSION} listening on ${service.url} (API reference: ${service.url}/docs)`];
  lines.push(service.adminUrl === undefined
    ? `admin API on the same listener (${service.url}/api/v1/admin/...); server.admin gives it one of its own`
    : `admin API on ${service.adminUrl}`);
  if (service.sqlAddress) {
    const { host, port } = service.sqlAddress;
    lines.push(`SQL front door (PostgreSQL wire protocol) on ${host}:${port}: psql "host=${host} port=${port} dbname=<vdb>@<version> user=<anyone> password=<token>"`);
  }
  for (const activation of semantic.list()) lines.push(vdbLine(activation, semantic, config.descriptors));
  if (semantic.startupBlocked) {
    lines.push('startup blocked: a semantic model whose policy is blockStartup failed; only /observe/health and the admin API answer');
  }
  lines.push(`${count(endpoints.queries.length, 'query', 'queries')}, ${count(endpoints.actions.length, 'action', 'actions')}, `
    + `${count(config.capabilities.length, 'capability', 'capabilities')} (${config.capabilities.map((capability) => capability.name).join(', ') || 'none'})`);
  return [...lines, ...demoTokenLines(config, service.url)];
}

function vdbLine(activation: VdbActivation, semantic: SemanticRegistry, descriptors: string): string {
  const name = `VDB ${activation.name} ${activation.version}`;
  switch (activation.state) {
    case 'active':
      return `${name}: active (semantic model published)`;
    case 'catalogOnly':
      return `${name}: catalogOnly (no semantic model; its catalog is served)`;
    default: {
      const policy = activation.activationFailurePolicy === 'isolate' ? 'isolated by policy: served without its model' : 'policy blockStartup';
      const cause = semantic.firstProblem(activation, descriptors);
      const failure = activation.compilationFailure;
      const reason = cause ? formatProblem(cause) : failure ? `${failure.code}: ${failure.message}` : 'see GET /api/v1/admin/semantic/vdbs';
      return `${name}: ${activation.state} (${policy}): ${reason}`;
    }
  }
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The demo's local tokens, so a newcomer can call the API at once. Only the built-in defaults are shown:
 * a token set from the environment is a real secret and is never printed.
 */
function demoTokenLines(config: ServiceConfig, url: string): string[] {
  if (config.auth.scheme !== 'bearer') return [];
  // the scheme validated `tokens` against its manifest: entries with `token` (or `sha256`), `subject`, `roles`
  const entries = (config.auth.settings['tokens'] ?? []) as { token?: string; subject: string; roles?: string[] }[];
  const demo = entries.filter((entry) => entry.token !== undefined && DEMO_TOKEN.test(entry.token));
  if (demo.length === 0) return [];
  const lines = demo.map((entry) => `local token: Authorization: Bearer ${entry.token} (subject ${entry.subject}, roles ${(entry.roles ?? []).join(', ')})`);
  const example = demo.find((entry) => !(entry.roles ?? []).includes('admin')) ?? demo[0];
  return [
    ...lines,
    'these local tokens are public defaults: set VDB_ADMIN_TOKEN / VDB_ANALYST_TOKEN anywhere but your laptop',
    `try: curl -s -H "Authorization: Bearer ${example?.token}" ${url}/api/v1/vdbs`,
  ];
}
