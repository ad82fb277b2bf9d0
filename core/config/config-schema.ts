/** JSON Schema (draft 2020-12) of service.yaml. Documented key by key in docs/configuration.md. */
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
    logging: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
      },
    },
  },
} as const;
