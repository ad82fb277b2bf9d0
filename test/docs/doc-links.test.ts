import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

/** The project root (tests run from dist/test/docs). */
const root = fileURLToPath(new URL('../../../', import.meta.url));

const SKIPPED = new Set(['node_modules', 'dist', '.data', '.git']);

function filesUnder(path: string, accept: (name: string) => boolean): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return accept(path) ? [path] : [];
  return readdirSync(full)
    .filter((name) => !SKIPPED.has(name))
    .flatMap((name) => filesUnder(join(path, name), accept));
}

/** README.md and every Markdown file of docs/, relative to the root. */
const markdownFiles = ['README.md', ...filesUnder('docs', (name) => name.endsWith('.md'))];

/** The text of a Markdown file without fenced code blocks, where neither links nor headings are. */
function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text without code blocks and inline code, where a link is not a link. */
function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '');
}

/** Targets of inline links `[text](target "title")` and reference definitions `[id]: target`. */
function linkTargets(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] as string);
  const references = [...body.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((match) => match[1] as string);
  return [...inline, ...references];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = anchorOf(match[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const links = suite('docs: links');

links('README.md and docs/ are found', () => {
  assert.ok(markdownFiles.includes('README.md'));
  assert.ok(markdownFiles.includes(join('docs', 'architecture.md')));
  assert.ok(markdownFiles.length > 5);
});

links('every relative link of README.md and docs/ points at a file of the project, and at a heading it has', () => {
  const broken: string[] = [];
  for (const file of markdownFiles) {
    const source = join(root, file);
    for (const target of linkTargets(readFileSync(source, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? source : resolve(dirname(source), decodeURIComponent(path));
      if (relative(root, resolved).startsWith('..')) {
        broken.push(`${file}: ${target} leaves the project`);
      } else if (!existsSync(resolved)) {
        broken.push(`${file}: ${target} does not exist`);
      } else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${file}: ${target} names no heading of ${relative(root, resolved)}`);
      }
    }
  }
  assert.equal(broken, []);
});

links('no file of the project mentions the shared design document or the folder beside the project', () => {
  // Written so that this file does not match itself.
  const design = new RegExp(['DESIGN', 'md'].join('\\.'));
  const beside = new RegExp(['\\.\\.', 'shared'].join('/'));
  const folders = ['README.md', 'core', 'plugins', 'adapters', 'docs', 'test', 'bench', 'scripts', 'descriptors'];
  const offenders = folders
    .flatMap((folder) => filesUnder(folder, () => true))
    .filter((file) => {
      const text = readFileSync(join(root, file), 'utf8');
      return design.test(text) || beside.test(text);
    });
  assert.equal(offenders, []);
});

links.run();
