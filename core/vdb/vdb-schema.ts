/** JSON Schema of a VDB file (`descriptors/vdbs/*.yaml`); every key is described in docs/vdb-file.md. */
const identifier = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_$-]*$' } as const;
const sha256 = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
/** A function name as written unquoted in SQL, without a schema. */
const functionName = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_$]*$' } as const;

export const vdbSchema = {
  $id: 'https://vdb-service.dev/schemas/vdb.json',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'version', 'datasource', 'schemas'],
  properties: {
    name: { type: 'string', pattern: '^[a-z][a-z0-9_-]*$' },
    version: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
    description: { type: 'string' },
    datasource: identifier,
    schemas: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: identifier,
          datasource: identifier,
          include: { type: 'array', minItems: 1, uniqueItems: true, items: identifier },
        },
      },
    },
    semantic: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', default: true },
        activationFailurePolicy: { enum: ['isolate', 'blockStartup'] },
        defaultSchema: identifier,
        // alias (as a source's first part writes it) -> a datasource of the VDB
        databaseAliases: { type: 'object', propertyNames: { pattern: '^[^.\\s]+$' }, additionalProperties: identifier },
        module: {
          type: 'object',
          additionalProperties: false,
          required: ['uri', 'name', 'version', 'sha256'],
          properties: { uri: { type: 'string', minLength: 1 }, name: { type: 'string' }, version: { type: 'string' }, sha256 },
        },
        provider: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'uri', 'sha256'],
          properties: {
            id: { type: 'string', minLength: 1 },
            uri: { type: 'string', minLength: 1 },
            mediaType: { type: 'string' },
            version: { type: 'string' },
            sha256,
          },
        },
      },
      oneOf: [{ required: ['module'] }, { required: ['provider'] }],
    },
    allowFunctions: { type: 'array', uniqueItems: true, items: functionName },
    dataRoles: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'grants'],
        properties: {
          name: { type: 'string', minLength: 1 },
          // a PostgreSQL identifier that needs no quoting to read (the dialect quotes it anyway): at most 63 bytes
          dbRole: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' },
          // a datasource of service.yaml logging in as this data role's user (MySQL with roles.sync false)
          connection: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' },
          grants: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['resource', 'allow'],
              properties: {
                resource: { type: 'string', pattern: '^[^.\\s]+(\\.[^.\\s]+){0,2}$' },
                allow: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['select', 'insert', 'update', 'delete'] } },
                columns: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1 } },
              },
            },
          },
        },
      },
    },
  },
} as const;
