import { NotFoundError } from '../plugin-api/errors.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';

/** Every VDB of the bundle by name and version. Fixed after startup. */
export class VdbRegistry {
  private readonly byKey = new Map<string, VirtualDatabase>();

  constructor(vdbs: readonly VirtualDatabase[]) {
    for (const vdb of vdbs) this.byKey.set(key(vdb.name, vdb.version), vdb);
  }

  list(): VirtualDatabase[] {
    return [...this.byKey.values()];
  }

  find(name: string, version: string): VirtualDatabase | undefined {
    return this.byKey.get(key(name, version));
  }

  /** The VDB of that name and version; 404 `vdb_not_found` otherwise. */
  get(name: string, version: string): VirtualDatabase {
    const vdb = this.find(name, version);
    if (!vdb) throw new NotFoundError('vdb_not_found', `VDB ${name} version ${version} is not active`);
    return vdb;
  }

  versionsOf(name: string): VirtualDatabase[] {
    return this.list().filter((vdb) => vdb.name === name);
  }
}

function key(name: string, version: string): string {
  return `${name}\u0000${version}`;
}
