// tsc emits only JavaScript; plugin manifests must sit beside their compiled entry.
import { cpSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['adapters', 'plugins', 'test/fixtures'];
function copyManifests(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyManifests(path);
    else if (name === 'plugin.json') cpSync(path, join('dist', path));
  }
}
for (const root of roots) if (existsSync(root)) copyManifests(root);
