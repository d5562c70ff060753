import { existsSync, readFileSync } from 'node:fs';

// Data sits next to the compiled modules: src/prefilter/assets in tests, dist/prefilter/assets
// after the build's copy step. Falling back to src/ keeps a build that forgot the copy working
// from a checkout. (Not "data/": the repository's .gitignore ignores every folder of that name.)
function assetUrl(file: string): URL {
  const candidates = [new URL(`./assets/${file}`, import.meta.url), new URL(`../../src/prefilter/assets/${file}`, import.meta.url)];
  for (const u of candidates) if (existsSync(u)) return u;
  throw new Error(`prefilter: data file ${file} not found next to ${new URL('.', import.meta.url).pathname}`);
}

/** One shipped data file's text. */
export function readAssetText(file: string): string {
  return readFileSync(assetUrl(file), 'utf8');
}

/** One shipped JSON data file, parsed (the caller checks its shape). */
export function readAsset(file: string): unknown {
  return JSON.parse(readAssetText(file));
}
