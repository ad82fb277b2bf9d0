import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as assert from 'uvu/assert';
import { CredentialError, type CredentialFailure } from '../../core/plugin-api/auth-scheme.js';
import { StartupError } from '../../core/plugin-api/errors.js';
import type { PluginManifest } from '../../core/plugin-api/plugin-manifest.js';

/** Headers carrying `Authorization: Bearer <token>`. */
export function bearer(token: string): IncomingHttpHeaders {
  return { authorization: `Bearer ${token}` };
}

/** What a promise rejected with; `undefined` when it resolved. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Awaits a refusal and checks its reason; returns the error for further checks. */
export async function refusedWith(promise: Promise<unknown>, reason: CredentialFailure): Promise<CredentialError> {
  const error = await rejection(promise);
  assert.instance(error, CredentialError, `expected a CredentialError ${reason}`);
  assert.is((error as CredentialError).reason, reason, (error as Error).message);
  return error as CredentialError;
}

/** Awaits a startup failure and returns its message. */
export async function startupMessage(promise: Promise<unknown>): Promise<string> {
  const error = await rejection(promise);
  assert.instance(error, StartupError, 'expected a StartupError');
  return (error as StartupError).message;
}

/** The compiled manifest of a built-in plugin folder (tests run from dist/test/auth). */
export function builtInManifest(folder: string): PluginManifest {
  return JSON.parse(readFileSync(new URL(`../../plugins/${folder}/plugin.json`, import.meta.url), 'utf8')) as PluginManifest;
}

/** A validator for the manifest's configSchema, configured as the core's (defaults filled in). */
export function configValidator(manifest: PluginManifest): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults: true });
  return ajv.compile(manifest.configSchema ?? {});
}
