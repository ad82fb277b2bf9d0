/** JSON Schema (draft 2020-12) of service.yaml. Documented key by key in docs/configuration.md. */

/** The longest statement authorized, in UTF-8 bytes, unless `sql.maxStatementBytes` says otherwise. */
export const DEFAULT_MAX_STATEMENT_BYTES = 65_536;

/** Budgets of a task (docs/tasks.md): service defaults under `runtime.budgets`, overrides per capability. */
const BUDGETS = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxSteps: { type: 'integer', minimum: 1 },
    maxServiceActions: { type: 'integer', minimum: 0 },
    maxObservationRows: { type: 'integer', minimum: 0 },
    maxObservationBytes: { type: 'integer', minimum: 0 },
    maxModelCalls: { type: 'integer', minimum: 0 },
    maxInputTokens: { type: 'integer', minimum: 0 },
    maxOutputTokens: { type: 'integer', minimum: 0 },
    maxDurationSeconds: { type: 'integer', minimum: 1 },
  },
} as const;

export const configSchema = {
  $id: 'https://vdb-service.dev/schemas/service-config.json',
  type: 'object',
  additionalProperties: false,
  required: ['datasources', 'auth'],
  properties: {
    instanceId: { type: 'string', minLength: 1, description: 'Engine instance id; default hostname:port.' },
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', default: '0.0.0.0' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8282 },
        maxBodyBytes: { type: 'integer', minimum: 1, default: 1048576 },
        requestTimeoutMs: { type: 'integer', minimum: 1, default: 30000 },
        keepAliveTimeoutMs: { type: 'integer', minimum: 1, default: 65000 },
        maxResultBytes: { type: 'integer', minimum: 2, default: 16777216 },
        admin: {
          type: 'object',
          additionalProperties: false,
          required: ['port'],
          properties: {
            host: { type: 'string', default: '127.0.0.1' },
            port: { type: 'integer', minimum: 0, maximum: 65535 },
          },
        },
      },
    },
    descriptors: { type: 'string', minLength: 1, default: './descriptors' },
    plugins: {
      type: 'array',
      default: [],
      items: {
        oneOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            additionalProperties: false,
            properties: {
              path: { type: 'string', minLength: 1 },
              package: { type: 'string', minLength: 1 },
              config: { type: 'object', default: {} },
            },
            oneOf: [{ required: ['path'] }, { required: ['package'] }],
          },
        ],
      },
    },
    datasources: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['adapter'],
        properties: {
          adapter: { type: 'string', minLength: 1 },
          connection: { type: 'object', default: {} },
          pool: {
            type: 'object',
            additionalProperties: false,
            default: {},
            properties: {
              min: { type: 'integer', minimum: 0 },
              max: { type: 'integer', minimum: 1 },
              acquireTimeoutMs: { type: 'integer', minimum: 1 },
              idleTimeoutMs: { type: 'integer', minimum: 1 },
            },
          },
          init: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
          roles: {
            type: 'object',
            additionalProperties: false,
            default: {},
            properties: { sync: { type: 'boolean', default: true } },
          },
        },
      },
    },
    auth: {
      type: 'object',
      required: ['scheme'],
      properties: {
        scheme: { type: 'string', minLength: 1 },
        adminRoles: { type: 'array', items: { type: 'string', minLength: 1 }, default: ['admin'] },
      },
    },
    semantic: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        activationFailurePolicy: { enum: ['isolate', 'blockStartup'], default: 'isolate' },
      },
    },
    federation: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'statements over several datasources of a VDB (docs/federation.md)',
      properties: {
        semiJoinMaxKeys: { type: 'integer', minimum: 0, default: 10000 },
        shipMaxRows: { type: 'integer', minimum: 0, default: 250000 },
        maxSourceRows: { type: 'integer', minimum: 1, default: 1000000 },
        memoryLimit: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?\\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$', default: '512MB' },
      },
    },
    sql: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'how the SQL the service authorizes is bounded, and the SQL front door (docs/sql.md)',
      properties: {
        maxStatementBytes: { type: 'integer', minimum: 1024, default: DEFAULT_MAX_STATEMENT_BYTES },
        enabled: { type: 'boolean', default: false, description: 'serve the PostgreSQL wire protocol' },
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 5433 },
        tls: {
          type: 'object',
          additionalProperties: false,
          required: ['cert', 'key'],
          description: 'PEM files (relative to the config file) for clients that ask for TLS',
          properties: { cert: { type: 'string', minLength: 1 }, key: { type: 'string', minLength: 1 } },
        },
        maxConnections: { type: 'integer', minimum: 1, default: 100 },
        idleTimeoutMs: { type: 'integer', minimum: 1, default: 600000 },
        statementTimeoutMs: { type: 'integer', minimum: 1, description: 'default: server.requestTimeoutMs' },
        allowWrites: { type: 'boolean', default: false },
      },
    },
    runtime: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        transport: { type: 'string', minLength: 1, default: 'inProcess' },
        baseURL: { type: 'string', pattern: '^https?://[^\s]+$' },
        bearerToken: { type: 'string', minLength: 16 },
        timeoutMs: { type: 'integer', minimum: 1, default: 30000 },
        transportLimitBytes: { type: 'integer', minimum: 1024, default: 1048576 },
        budgets: { ...BUDGETS, default: {} },
        reference: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'the standalone reference runtime (npm run runtime)',
          properties: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'integer', minimum: 0, maximum: 65535, default: 8383 } },
        },
      },
    },
    capabilities: {
      type: 'array',
      default: [{ name: 'answer', description: "Answer a question about the VDB's data" }],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*$' },
          description: { type: 'string' },
          budgets: BUDGETS,
        },
      },
    },
    actions: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The journal of action runs, their recovery and Idempotency-Key (docs/actions.md)',
      properties: {
        idempotencyTtlSeconds: { type: 'integer', minimum: 1, default: 86400 },
        leaseSeconds: { type: 'integer', minimum: 1, maximum: 3600, default: 10 },
        recoveryIntervalSeconds: { type: 'integer', minimum: 1, maximum: 86400, default: 5 },
        journal: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: { datasource: { type: 'string', minLength: 1 } },
        },
      },
    },
    mcp: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'the MCP endpoint on the main listener (docs/mcp.md)',
      properties: {
        enabled: { type: 'boolean', default: false },
        path: { type: 'string', pattern: '^/[A-Za-z0-9._~/-]*$', default: '/mcp' },
        allowedOrigins: { type: 'array', default: [], items: { type: 'string', pattern: '^https?://[^/]+$' } },
        allowedHosts: { type: 'array', default: [], items: { type: 'string', pattern: '^[A-Za-z0-9.-]+$' } },
        maxSessions: { type: 'integer', minimum: 1, default: 1000 },
      },
    },
    logging: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
      },
    },
    observe: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        metrics: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'GET /observe/metrics (docs/observability.md)',
          properties: { auth: { enum: ['none', 'admin'], default: 'none' } },
        },
      },
    },
  },
} as const;
