// tsc does not copy data files: put each src/**/data and src/**/assets folder beside its compiled module.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const src = join(dir, name);
    if (!statSync(src).isDirectory()) continue;
    if (name === 'data' || name === 'assets') cpSync(src, src.replace(/^src/, 'dist'), { recursive: true });
    else walk(src);
  }
}
if (existsSync('src')) walk('src');
