/**
 * Names in a model are matched exactly first; a name that differs only in case matches when it is the
 * only such candidate (an unquoted name folds in SQL, and a model author rarely means two names that differ
 * only in case).
 */
export class NameTable<T> {
  private readonly exact = new Map<string, T>();
  private readonly folded = new Map<string, T[]>();

  /** Adds an entry; returns the entry already there under that exact name, if any. */
  add(name: string, value: T): T | undefined {
    const existing = this.exact.get(name);
    if (existing !== undefined) return existing;
    this.exact.set(name, value);
    const key = name.toLowerCase();
    const folded = this.folded.get(key);
    if (folded) folded.push(value);
    else this.folded.set(key, [value]);
    return undefined;
  }

  find(name: string, options: { foldCase?: boolean } = {}): T | undefined {
    const exact = this.exact.get(name);
    if (exact !== undefined || options.foldCase === false) return exact;
    const folded = this.folded.get(name.toLowerCase());
    return folded?.length === 1 ? folded[0] : undefined;
  }

  names(): string[] {
    return [...this.exact.keys()];
  }
}

/** ` (did you mean "orders"?)` when a candidate is close to the name, else an empty string. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= Math.max(1, Math.floor(name.length / 4)) && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best ? ` (did you mean "${best.candidate}"?)` : '';
}

/** Like `didYouMean`, but lists the candidates when none is close and they are few: a column list helps. */
export function candidateHint(name: string, candidates: readonly string[]): string {
  const close = didYouMean(name, candidates);
  if (close !== '' || candidates.length === 0 || candidates.length > 12) return close;
  return ` (it has ${candidates.join(', ')})`;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}
