// Resolve hooks of the test worker (scripts/test-worker.mjs): a test file's `import … from 'uvu'` gets
// scripts/uvu-reported.mjs instead, which prints what a suite's hook threw. uvu's runner returns from a
// `finally`, which drops a before hook's error: its suite showed `(0 / 16)` and nothing to say why.
const reported = new URL('./uvu-reported.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === 'uvu' && context.parentURL !== reported && context.parentURL?.includes('/dist/test/')) {
    return { url: reported, shortCircuit: true };
  }
  return next(specifier, context);
}
