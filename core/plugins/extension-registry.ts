import { StartupError } from '../errors.js';

/**
 * The host side of one plugin kind: plugins add their contribution under their manifest id, the core looks
 * it up by id. Adding the same id twice is a startup error naming both plugins.
 */
export class ExtensionRegistry<T> {
  private readonly entries = new Map<string, { value: T; plugin: string }>();

  constructor(readonly kind: string) {}

  add(id: string, value: T, plugin: string): void {
    const existing = this.entries.get(id);
    if (existing) {
      throw new StartupError(`plugin ${plugin}: ${this.kind} id "${id}" is already registered by plugin ${existing.plugin}`);
    }
    this.entries.set(id, { value, plugin });
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  values(): T[] {
    return [...this.entries.values()].map((entry) => entry.value);
  }
}
