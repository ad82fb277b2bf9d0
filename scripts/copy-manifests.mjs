// tsc emits only JavaScript; plugin manifests must sit beside their compiled entry, and data files beside their reader.
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
// The Ossie JSON Schema the export validates against is read beside its compiled reader.
cpSync('core/semantic/ossie', join('dist', 'core', 'semantic', 'ossie'), { recursive: true });
