// Static checks of the container build and the compose stack (no Docker engine runs here): the
// Dockerfile, .dockerignore and docker-compose.yml must agree with each other and with the repo
// (package.json, tsconfig.json, config/gateway.yaml, the files they copy and mount).
import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parse as parseYaml } from 'yaml';
import {
  execForm,
  findStage,
  isIgnored,
  landsAt,
  parseCopy,
  parseDockerfile,
  parseDockerignore,
  parseEnv,
  shellWords,
  splitFlags,
  stageEnv,
  stageUser,
  stageWorkdir,
  type Copy,
  type Dockerfile,
  type Instruction,
  type Stage,
} from '../helpers/dockerfile.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (p: string): string => readFileSync(join(root, p), 'utf8');
const exists = (p: string): boolean => existsSync(join(root, p));
const isDir = (p: string): boolean => exists(p) && statSync(join(root, p)).isDirectory();

type Json = Record<string, unknown>;
function isRecord(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
function record(v: unknown, what: string): Json {
  if (!isRecord(v)) throw new Error(`${what}: expected a mapping`);
  return v;
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

// ---------------------------------------------------------------------------------------------
// The repository facts the deployment files must match.

const pkg = record(JSON.parse(read('package.json')), 'package.json');
const pkgScripts = record(pkg['scripts'], 'package.json scripts');

const tsconfig = (() => {
  const parsed = ts.parseConfigFileTextToJson('tsconfig.json', read('tsconfig.json'));
  if (parsed.error !== undefined) throw new Error('tsconfig.json does not parse');
  const cfg = record(parsed.config, 'tsconfig.json');
  const opts = record(cfg['compilerOptions'], 'tsconfig compilerOptions');
  const include = Array.isArray(cfg['include']) ? cfg['include'].filter((x): x is string => typeof x === 'string') : [];
  return { outDir: posix.normalize(str(opts['outDir']) ?? '.'), rootDir: posix.normalize(str(opts['rootDir']) ?? '.'), include };
})();

const gatewayConfig = record(parseYaml(read('config/gateway.yaml')), 'config/gateway.yaml');

/** `${env:NAME}` names the config's API keys read. */
const keyEnvNames: string[] = (() => {
  const auth = isRecord(gatewayConfig['auth']) ? gatewayConfig['auth'] : {};
  const keys = Array.isArray(auth['keys']) ? auth['keys'] : [];
  const names: string[] = [];
  for (const k of keys) {
    const key = isRecord(k) ? str(k['key']) : undefined;
    for (const m of (key ?? '').matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)) if (m[1] !== undefined) names.push(m[1]);
  }
  return names;
})();

/** The audit log's directory, relative to the gateway's working directory. */
const auditDir: string = (() => {
  const audit = isRecord(gatewayConfig['audit']) ? gatewayConfig['audit'] : {};
  return posix.dirname(str(audit['file']) ?? 'data/audit.jsonl');
})();

// ---------------------------------------------------------------------------------------------
// The Dockerfile, read once.

const df: Dockerfile = parseDockerfile(read('Dockerfile'));
const finalStage: Stage = (() => {
  const s = df.stages[df.stages.length - 1];
  if (s === undefined) throw new Error('Dockerfile has no FROM');
  return s;
})();
const appDir = stageWorkdir(df, finalStage);
const finalEnv = stageEnv(df, finalStage);

const of = (stage: Stage, keyword: string): Instruction[] => stage.instructions.filter((i) => i.keyword === keyword);
const copies = (stage: Stage): { copy: Copy; workdir: string; at: number }[] =>
  stage.instructions.flatMap((ins, at) =>
    ins.keyword === 'COPY' || ins.keyword === 'ADD' ? [{ copy: parseCopy(ins), workdir: stageWorkdir(df, stage, at), at }] : [],
  );
const runs = (stage: Stage): { cmd: string; at: number }[] =>
  stage.instructions.flatMap((ins, at) => (ins.keyword === 'RUN' ? [{ cmd: (execForm(ins.args) ?? [ins.args]).join(' '), at }] : []));

/** Where a repo path lands in `stage` through its local COPYs before instruction `before`. */
function placed(stage: Stage, path: string, before: number = stage.instructions.length): string | undefined {
  let where: string | undefined;
  for (const { copy, workdir, at } of copies(stage)) {
    if (at >= before || copy.from !== undefined) continue;
    where = landsAt(copy, workdir, path, isDir) ?? where;
  }
  return where;
}

/** `npm ci` / `npm install` that installs dev dependencies. */
const installsDevDeps = (cmd: string): boolean =>
  cmd.split(/&&|;|\|\|/).some((part) => /\bnpm\s+(ci|install|i)\b/.test(part) && !/--omit[= ]dev\b|--production\b|--only[= ]prod/.test(part));
const prunesDevDeps = (cmd: string): boolean =>
  /\bnpm\s+(ci|install|i|prune)\b[^&;|]*(--omit[= ]dev\b|--production\b|--only[= ]prod)/.test(cmd);

/** The port a listening `ENV PORT` / `EXPOSE` names. */
const exposed: string[] = of(finalStage, 'EXPOSE').flatMap((i) => shellWords(i.args).map((p) => p.replace(/\/tcp$/, '')));

function healthcheckCommand(ins: Instruction): string | undefined {
  const { rest } = splitFlags(ins.args);
  if (/^NONE$/i.test(rest.trim())) return undefined;
  const m = /^CMD\s+([\s\S]*)$/i.exec(rest.trim());
  if (m === null || m[1] === undefined) return undefined;
  return (execForm(m[1]) ?? [m[1]]).join(' ');
}

// ---------------------------------------------------------------------------------------------
// docker-compose.yml, normalised.

// `merge`: the replicas share one definition through a YAML merge key (`<<: *gateway`), as Compose reads it.
const compose = record(parseYaml(read('docker-compose.yml'), { merge: true }), 'docker-compose.yml');
const services = record(compose['services'], 'services');
const topVolumes = isRecord(compose['volumes']) ? compose['volumes'] : {};
const service = (name: string): Json => record(services[name], `service ${name}`);
/** The gateway replicas: gateway-1, gateway-2, … */
const replicas: string[] = Object.keys(services).filter((n) => /^gateway-\d+$/.test(n));

function dependsOn(svc: Json): Map<string, string | undefined> {
  const d = svc['depends_on'];
  const out = new Map<string, string | undefined>();
  if (Array.isArray(d)) for (const n of d) out.set(String(n), undefined);
  else if (isRecord(d)) for (const [n, v] of Object.entries(d)) out.set(n, isRecord(v) ? str(v['condition']) : undefined);
  return out;
}

interface Mount {
  readonly type: 'bind' | 'volume' | 'anonymous';
  readonly source: string | undefined;
  readonly target: string;
  readonly readOnly: boolean;
}
function mounts(svc: Json): Mount[] {
  const v = svc['volumes'];
  if (!Array.isArray(v)) return [];
  return v.map((m): Mount => {
    if (typeof m === 'string') {
      const parts = m.split(':');
      if (parts.length === 1) return { type: 'anonymous', source: undefined, target: parts[0] ?? '', readOnly: false };
      const [source = '', target = '', mode = ''] = parts;
      const bind = /^[./~]/.test(source);
      return { type: bind ? 'bind' : 'volume', source, target, readOnly: mode.split(',').includes('ro') };
    }
    const r = record(m, 'volume entry');
    const type = str(r['type']) === 'bind' ? 'bind' : str(r['source']) === undefined ? 'anonymous' : 'volume';
    return { type, source: str(r['source']), target: str(r['target']) ?? '', readOnly: r['read_only'] === true };
  });
}

function containerPorts(svc: Json): string[] {
  const p = svc['ports'];
  if (!Array.isArray(p)) return [];
  return p.map((e) => {
    if (isRecord(e)) return str(e['target']) ?? '';
    const s = (str(e) ?? '').replace(/\/(tcp|udp)$/, '');
    return s.slice(s.lastIndexOf(':') + 1);
  });
}

function environment(svc: Json): Map<string, string | undefined> {
  const e = svc['environment'];
  const out = new Map<string, string | undefined>();
  if (Array.isArray(e)) {
    for (const item of e) {
      const s = String(item);
      const eq = s.indexOf('=');
      out.set(eq < 0 ? s : s.slice(0, eq), eq < 0 ? undefined : s.slice(eq + 1));
    }
  } else if (isRecord(e)) for (const [k, v] of Object.entries(e)) out.set(k, v === null ? undefined : str(v));
  return out;
}

function healthTest(svc: Json): string | undefined {
  const hc = svc['healthcheck'];
  if (!isRecord(hc) || hc['disable'] === true) return undefined;
  const t = hc['test'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t) && t[0] !== 'NONE') return t.slice(1).map(String).join(' ');
  return undefined;
}

/** Compose durations: `1m30s`, `20s`, `500ms`. */
function seconds(d: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|us|h|m|s)/g;
  let consumed = 0;
  for (const m of d.matchAll(re)) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 0);
    consumed += m[0].length;
  }
  if (consumed !== d.length || d.length === 0) throw new Error(`not a duration: ${d}`);
  return total;
}

// =============================================================================================

describe('the Dockerfile reader', () => {
  it('joins continuations, drops comment lines inside them and reads stages', () => {
    const f = parseDockerfile(
      [
        '# syntax=docker/dockerfile:1',
        'ARG V=20',
        'FROM node:20-slim AS Build',
        'RUN echo a \\',
        '  # a comment inside the continuation',
        '',
        '  && echo b',
        'FROM node:20-slim',
        'COPY --from=build --chown=node:node /app/dist ./dist',
        'CMD ["node", "dist/server.js"]',
      ].join('\n'),
    );
    expect(f.preamble.map((i) => i.keyword)).toEqual(['ARG']);
    expect(f.stages.map((s) => s.name)).toEqual(['build', undefined]);
    const run = f.stages[0]?.instructions[0];
    expect(run?.line).toBe(4);
    expect(run?.args.replace(/\s+/g, ' ')).toBe('echo a && echo b');
    const copy = parseCopy(f.stages[1]?.instructions[0] ?? { keyword: 'X', args: '', line: 0 });
    expect(copy).toMatchObject({ from: 'build', chown: 'node:node', sources: ['/app/dist'], dest: './dist' });
    expect(findStage(f, 'build')?.index).toBe(0);
    expect(findStage(f, 'nope')).toBeUndefined();
  });

  it('tells exec form from shell form and reads both ENV forms', () => {
    expect(execForm('["node", "dist/server.js"]')).toEqual(['node', 'dist/server.js']);
    expect(execForm('node dist/server.js')).toBeUndefined();
    expect(execForm('[node, dist/server.js]')).toBeUndefined();
    expect([...parseEnv('A=1 B="two words" C=\'x y\'')]).toEqual([['A', '1'], ['B', 'two words'], ['C', 'x y']]);
    expect([...parseEnv('NODE_ENV production')]).toEqual([['NODE_ENV', 'production']]);
  });

  it('places copied paths like Docker does', () => {
    const c = (args: string): Copy => parseCopy({ keyword: 'COPY', args, line: 1 });
    const dirs = (p: string): boolean => p === 'src' || p === 'scripts';
    expect(landsAt(c('src ./src'), '/app', 'src/server.ts', dirs)).toBe('/app/src/server.ts');
    expect(landsAt(c('src .'), '/app', 'src/server.ts', dirs)).toBe('/app/server.ts');
    expect(landsAt(c('package.json package-lock.json ./'), '/app', 'package-lock.json', dirs)).toBe('/app/package-lock.json');
    expect(landsAt(c('tsconfig.json /etc/x.json'), '/app', 'tsconfig.json', dirs)).toBe('/etc/x.json');
    expect(landsAt(c('. .'), '/w', 'a/b', dirs)).toBe('/w/a/b');
    expect(landsAt(c('scripts ./scripts'), '/app', 'src/server.ts', dirs)).toBeUndefined();
  });

  it('matches .dockerignore patterns with parents, globs and negation', () => {
    const p = parseDockerignore('# c\nnode_modules\n/dist/\n**/*.log\n*.md\n!README.md\n');
    expect(isIgnored(p, 'node_modules')).toBe(true);
    expect(isIgnored(p, 'node_modules/yaml/package.json')).toBe(true);
    expect(isIgnored(p, 'dist/server.js')).toBe(true);
    expect(isIgnored(p, 'src/a/b.log')).toBe(true);
    expect(isIgnored(p, 'NOTES.md')).toBe(true);
    expect(isIgnored(p, 'README.md')).toBe(false);
    expect(isIgnored(p, 'src/README.md')).toBe(false);
    expect(isIgnored(p, 'src/server.ts')).toBe(false);
  });
});

describe('Dockerfile', () => {
  it('has at least two named stages on the newest Node major that package.json engines supports (the current LTS)', () => {
    expect(df.stages.length).toBeGreaterThanOrEqual(2);
    const names = df.stages.map((s) => s.name);
    for (const n of names) expect(n, 'every stage is named (FROM ... AS name)').toBeTruthy();
    expect(new Set(names).size).toBe(names.length);
    // engines is a list of caret ranges (`^20.19.0 || ^24.0.0`): the image runs the newest of them.
    const ranges = (str(record(pkg['engines'], 'engines')['node']) ?? '').split('||').map((r) => /^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(r)?.[1]);
    expect(ranges.every((m) => m !== undefined), 'engines.node is caret ranges joined by ||').toBe(true);
    const major = String(Math.max(...ranges.map(Number)));
    expect(major).toBe('24');
    const bases = new Set<string>();
    for (const s of df.stages) {
      if (findStage(df, s.image, s.index) !== undefined) continue; // built from an earlier stage
      expect(s.image, `stage ${s.name}`).toMatch(new RegExp(`^node:${major}(?:[.-][\\w.-]*)?$`));
      bases.add(s.image);
    }
    expect(bases.size, 'build and runtime stages share one base (same glibc and Node ABI)').toBe(1);
  });

  it('every COPY --from names an earlier stage', () => {
    for (const stage of df.stages) {
      for (const { copy } of copies(stage)) {
        if (copy.from === undefined) continue;
        expect(findStage(df, copy.from, stage.index), `line ${copy.line}: --from=${copy.from}`).toBeDefined();
      }
    }
  });

  it('every local COPY source exists in the repo and is inside the build context', () => {
    const ignore = parseDockerignore(read('.dockerignore'));
    let count = 0;
    for (const stage of df.stages) {
      for (const { copy } of copies(stage)) {
        if (copy.from !== undefined) continue;
        for (const src of copy.sources) {
          expect(/^[a-z]+:\/\//i.test(src), `line ${copy.line}: remote source ${src}`).toBe(false);
          expect(exists(src), `line ${copy.line}: ${src} exists`).toBe(true);
          expect(isIgnored(ignore, src), `line ${copy.line}: ${src} is excluded by .dockerignore`).toBe(false);
          count++;
        }
      }
    }
    expect(count).toBeGreaterThan(0);
  });

  it('installs from the lockfile: each `npm ci` has package.json and package-lock.json in place', () => {
    for (const stage of df.stages) {
      for (const { cmd, at: idx } of runs(stage)) {
        if (!/\bnpm\s+ci\b/.test(cmd)) continue;
        const wd = stageWorkdir(df, stage, idx);
        expect(placed(stage, 'package.json', idx), `stage ${stage.name}: package.json before npm ci`).toBe(posix.join(wd, 'package.json'));
        expect(placed(stage, 'package-lock.json', idx), `stage ${stage.name}: lockfile before npm ci`).toBe(posix.join(wd, 'package-lock.json'));
      }
    }
  });

  it('has a build stage that runs `npm run build` with every input the build script reads', () => {
    const build = df.stages.find((s) => runs(s).some((r) => /\bnpm\s+run\s+build\b/.test(r.cmd)));
    expect(build, 'a stage runs npm run build').toBeDefined();
    if (build === undefined) return;
    const idx = runs(build).find((r) => /\bnpm\s+run\s+build\b/.test(r.cmd))?.at ?? 0;
    const wd = stageWorkdir(df, build, idx);
    const script = str(pkgScripts['build']) ?? '';
    const inputs = new Set<string>(['package.json', 'package-lock.json']);
    for (const m of script.matchAll(/\btsc\s+(?:-p|--project)\s+(\S+)/g)) if (m[1] !== undefined) inputs.add(m[1]);
    for (const m of script.matchAll(/\bnode\s+(\S+\.m?js)\b/g)) if (m[1] !== undefined) inputs.add(m[1]);
    expect(inputs.has('tsconfig.json'), `build script: ${script}`).toBe(true);
    for (const inc of tsconfig.include) inputs.add(inc);
    inputs.add(posix.join(tsconfig.rootDir, 'server.ts'));
    for (const input of inputs) {
      expect(exists(input), `${input} exists`).toBe(true);
      expect(placed(build, input, idx), `${input} copied to ${wd} before npm run build`).toBe(posix.join(wd, input));
    }
    expect(runs(build).some((r) => r.at < idx && installsDevDeps(r.cmd)), 'dev dependencies (tsc) installed before the build').toBe(true);
  });

  it('runtime stage: non-root USER, NODE_ENV=production, HOST/PORT set, one EXPOSEd port', () => {
    const user = stageUser(df, finalStage);
    expect(user, 'the final stage sets USER').toBeDefined();
    const name = (user ?? '').split(':')[0] ?? '';
    expect(['', 'root', '0']).not.toContain(name);
    if (name !== 'node' && !/^\d+$/.test(name)) {
      // Not the base image's `node` user: the stage must create it.
      expect(runs(finalStage).some((r) => /\b(useradd|adduser)\b/.test(r.cmd) && r.cmd.includes(name))).toBe(true);
    }
    expect(finalEnv.get('NODE_ENV')).toBe('production');
    expect(finalEnv.get('HOST'), 'reachable from outside the container').toMatch(/^(0\.0\.0\.0|::)$/);
    expect(exposed).toHaveLength(1);
    expect(finalEnv.get('PORT')).toBe(exposed[0]);
  });

  it('runtime stage: HEALTHCHECK probes /healthz on the port with node (no curl in slim images)', () => {
    const hcs = of(finalStage, 'HEALTHCHECK');
    expect(hcs).toHaveLength(1);
    const cmd = hcs[0] === undefined ? undefined : healthcheckCommand(hcs[0]);
    expect(cmd, 'HEALTHCHECK CMD ...').toBeDefined();
    expect(cmd).toMatch(/^node\s/);
    expect(cmd).not.toMatch(/\b(curl|wget)\b/);
    expect(cmd).toContain('/healthz');
    expect(cmd).toMatch(/127\.0\.0\.1|localhost/);
    expect(cmd?.includes(`:${exposed[0]}/`) || cmd?.includes('process.env.PORT'), 'probes the listening port').toBe(true);
    if (cmd?.includes('process.env.PORT') === true) expect(cmd).toContain(`||${exposed[0]}`);
  });

  it('runtime stage: CMD is exec form running the compiled entry (src/server.ts → dist/server.js)', () => {
    expect(tsconfig.outDir).toBe('dist');
    expect(tsconfig.rootDir).toBe('src');
    const cmds = of(finalStage, 'CMD');
    expect(cmds).toHaveLength(1);
    expect(of(finalStage, 'ENTRYPOINT')).toHaveLength(0);
    const argv = execForm(cmds[0]?.args ?? '');
    expect(argv, 'CMD ["node", "..."] so SIGTERM reaches node').toBeDefined();
    expect(argv?.[0]).toBe('node');
    const script = argv?.[1] ?? '';
    expect(script).toBe(str(pkg['main']));
    const rel = posix.relative(appDir, posix.resolve(appDir, script));
    expect(rel.startsWith(`${tsconfig.outDir}/`), `${script} is under outDir`).toBe(true);
    const source = posix.join(tsconfig.rootDir, rel.slice(tsconfig.outDir.length + 1)).replace(/\.js$/, '.ts');
    expect(exists(source), `${source} compiles to ${script}`).toBe(true);
    const stop = of(finalStage, 'STOPSIGNAL');
    for (const s of stop) expect(s.args, 'the gateway drains on SIGTERM').toBe('SIGTERM');
  });

  it('runtime stage: copies dist from the build stage and pruned node_modules, nothing else built', () => {
    const fromStages = copies(finalStage).filter((c) => c.copy.from !== undefined);
    const find = (what: string): { stage: Stage; copy: Copy; workdir: string } | undefined => {
      for (const c of fromStages) {
        const stage = findStage(df, c.copy.from ?? '', finalStage.index);
        if (stage === undefined) continue;
        const want = posix.join(stageWorkdir(df, stage), what);
        if (c.copy.sources.some((s) => posix.resolve('/', s) === want)) return { stage, copy: c.copy, workdir: c.workdir };
      }
      return undefined;
    };
    const dist = find(tsconfig.outDir);
    expect(dist, `COPY --from=<build> ${tsconfig.outDir}`).toBeDefined();
    if (dist !== undefined) {
      expect(runs(dist.stage).some((r) => /\bnpm\s+run\s+build\b/.test(r.cmd)), `stage ${dist.stage.name} builds`).toBe(true);
      expect(posix.resolve(dist.workdir, dist.copy.dest)).toBe(posix.join(appDir, tsconfig.outDir));
    }

    const nm = find('node_modules');
    expect(nm, 'COPY --from=<stage> node_modules').toBeDefined();
    if (nm !== undefined) {
      expect(posix.resolve(nm.workdir, nm.copy.dest)).toBe(posix.join(appDir, 'node_modules'));
      // Production-only: the last install step in that stage omits dev dependencies (or a prune follows).
      const steps = runs(nm.stage).filter((r) => installsDevDeps(r.cmd) || prunesDevDeps(r.cmd));
      const last = steps[steps.length - 1];
      expect(last !== undefined && prunesDevDeps(last.cmd), `stage ${nm.stage.name}: node_modules without dev deps`).toBe(true);
    }

    for (const r of runs(finalStage)) expect(installsDevDeps(r.cmd), `runtime RUN ${r.cmd}`).toBe(false);

    const allowedLocal = new Set(['package.json', 'package-lock.json', 'config', 'tools.d']);
    const allowedStaged = new Set([tsconfig.outDir, 'node_modules', 'package.json']);
    for (const { copy } of copies(finalStage)) {
      for (const s of copy.sources) {
        const base = posix.basename(posix.normalize(s));
        expect(copy.from === undefined ? allowedLocal.has(base) : allowedStaged.has(base), `runtime copies ${s}`).toBe(true);
      }
    }
  });

  it('runtime stage: package.json, config and tools.d sit where the gateway looks (its WORKDIR)', () => {
    // package.json carries "type": "module": without it dist/*.js does not load.
    expect(pkg['type']).toBe('module');
    expect(placed(finalStage, 'package.json')).toBe(posix.join(appDir, 'package.json'));
    expect(placed(finalStage, 'config/gateway.yaml')).toBe(posix.join(appDir, 'config/gateway.yaml'));
    expect(placed(finalStage, 'tools.d')).toBe(posix.join(appDir, 'tools.d'));
  });

  it('runtime stage: the audit directory is a VOLUME the USER can write, prepared before VOLUME', () => {
    const dataDir = posix.join(appDir, auditDir);
    const volumes = finalStage.instructions.flatMap((ins, at) =>
      ins.keyword === 'VOLUME' ? (execForm(ins.args) ?? shellWords(ins.args)).map((v) => ({ path: posix.resolve(appDir, v), at })) : [],
    );
    const vol = volumes.find((v) => v.path === dataDir);
    expect(vol, `VOLUME ${dataDir}`).toBeDefined();
    const user = (stageUser(df, finalStage) ?? '').split(':')[0] ?? '';
    const prep = runs(finalStage).find(
      (r) => /\bmkdir\b/.test(r.cmd) && /\bchown\b/.test(r.cmd) && r.cmd.includes(user) && (r.cmd.includes(dataDir) || r.cmd.includes(auditDir)),
    );
    expect(prep, `RUN mkdir ... && chown ${user} ${dataDir}`).toBeDefined();
    expect((prep?.at ?? Infinity) < (vol?.at ?? -1), 'changes after VOLUME are discarded').toBe(true);
  });
});

describe('.dockerignore', () => {
  const ignore = parseDockerignore(read('.dockerignore'));
  it('keeps host installs, builds, data and git out of the build context', () => {
    for (const p of ['node_modules', 'node_modules/yaml/package.json', '.git', '.git/HEAD', 'dist', 'data', 'test-results', 'coverage']) {
      expect(isIgnored(ignore, p), p).toBe(true);
    }
  });
  it('keeps what the image needs', () => {
    for (const p of ['package.json', 'package-lock.json', 'tsconfig.json', 'src/server.ts', 'scripts/copy-assets.mjs', 'config/gateway.yaml', 'tools.d']) {
      expect(isIgnored(ignore, p), p).toBe(false);
    }
  });
});

describe('docker-compose.yml', () => {
  it('has two or more gateway replicas, nginx and redis; every depends_on names a service with a healthcheck if it waits for one', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['lb', 'redis']));
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    for (const [name, raw] of Object.entries(services)) {
      for (const [dep, condition] of dependsOn(record(raw, name))) {
        expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
        if (condition === 'service_healthy') expect(healthTest(service(dep)), `${dep} has a healthcheck`).toBeDefined();
      }
    }
    for (const name of replicas) expect(dependsOn(service(name)).get('redis'), name).toBe('service_healthy');
  });

  it('redis: official 7.x image, healthcheck redis-cli ping, data on a named volume', () => {
    const redis = service('redis');
    expect(str(redis['image'])).toMatch(/^(docker\.io\/(library\/)?)?redis:7(?:[.-][\w.-]*)?$/);
    expect(healthTest(redis)).toMatch(/redis-cli\b.*\bping\b/);
    expect(mounts(redis).some((m) => m.type === 'volume' && m.target === '/data')).toBe(true);
  });

  it('named volumes are declared and bind-mount sources exist', () => {
    for (const [name, raw] of Object.entries(services)) {
      for (const m of mounts(record(raw, name))) {
        if (m.type === 'volume') expect(Object.keys(topVolumes), `${name}: volume ${m.source}`).toContain(m.source);
        if (m.type === 'bind') expect(exists(m.source ?? ''), `${name}: bind source ${m.source}`).toBe(true);
        expect(m.target.startsWith('/'), `${name}: target ${m.target}`).toBe(true);
      }
    }
  });

  it('each replica builds this Dockerfile and mounts tools.d, config (read-only) and its own data volume where the image keeps them', () => {
    const dataVolumes = new Set<string | undefined>();
    for (const name of replicas) {
      const gw = service(name);
      const build = gw['build'];
      const context = typeof build === 'string' ? build : isRecord(build) ? (str(build['context']) ?? '.') : undefined;
      expect(context, 'gateway: build').toBeDefined();
      const dockerfile = isRecord(build) ? (str(build['dockerfile']) ?? 'Dockerfile') : 'Dockerfile';
      expect(posix.join(context ?? '', dockerfile)).toBe('Dockerfile');

      const ms = mounts(gw);
      const bind = (dir: string): Mount | undefined => ms.find((m) => m.type === 'bind' && posix.normalize(m.source ?? '') === dir);
      for (const dir of ['tools.d', 'config']) {
        const m = bind(dir);
        expect(m, `./${dir} is mounted`).toBeDefined();
        expect(m?.target).toBe(posix.join(appDir, dir));
        expect(m?.readOnly, `./${dir} read-only`).toBe(true);
      }
      const data = ms.find((m) => m.target === posix.join(appDir, auditDir));
      expect(data?.type, `a named volume at ${posix.join(appDir, auditDir)}`).toBe('volume');
      dataVolumes.add(data?.source);
    }
    expect(dataVolumes.size, 'two processes never append to one audit file').toBe(replicas.length);
  });

  it("replicas listen on the Dockerfile's EXPOSE and PORT and publish nothing: nginx is the one way in", () => {
    for (const name of replicas) {
      const gw = service(name);
      expect(containerPorts(gw), `${name} publishes no host port`).toHaveLength(0);
      const envPort = environment(gw).get('PORT');
      if (envPort !== undefined) expect(envPort).toBe(exposed[0]);
    }
    expect(finalEnv.get('PORT')).toBe(exposed[0]);
  });

  it('lb: the official nginx image, deploy/nginx.conf mounted read-only, waiting for healthy replicas', () => {
    const lb = service('lb');
    expect(str(lb['image'])).toMatch(/^(docker\.io\/(library\/)?)?nginx:[\w.-]+$/);
    const conf = mounts(lb).find((m) => m.type === 'bind' && posix.normalize(m.source ?? '') === 'deploy/nginx.conf');
    expect(conf?.target).toMatch(/^\/etc\/nginx\/(nginx\.conf|conf\.d\/[\w.-]+\.conf)$/);
    expect(conf?.readOnly).toBe(true);
    for (const name of replicas) expect(dependsOn(lb).get(name), `lb waits for ${name}`).toBe('service_healthy');
  });

  it('deploy/nginx.conf: listens on the published port; least_conn over every replica; /mcp with no stickiness, the SSE transport sticky by client', () => {
    const conf = read('deploy/nginx.conf').replace(/#.*$/gm, '');
    const published = containerPorts(service('lb'));
    expect(published).toHaveLength(1);
    expect(conf).toMatch(new RegExp(`\\blisten\\s+${published[0]}\\s*;`));
    const upstreams = new Map([...conf.matchAll(/upstream\s+([\w-]+)\s*\{([^}]*)\}/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    const servers = (body: string) => [...body.matchAll(/\bserver\s+([\w.-]+):(\d+)/g)].map((m) => `${m[1]}:${m[2]}`).sort();
    const all = replicas.map((r) => `${r}:${exposed[0]}`).sort();
    const passTo = (loc: string) => new RegExp(`location\\s+${loc}\\s*\\{[^}]*proxy_pass\\s+http://([\\w-]+)`).exec(conf)?.[1] ?? '';
    const main = upstreams.get(passTo('/')) ?? '';
    expect(main).toMatch(/\bleast_conn\s*;/);
    expect(servers(main)).toEqual(all);
    // 2025 sessions are shared through Redis: /mcp goes to the balanced upstream, no hash of any kind.
    const mcp = upstreams.get(passTo('/mcp')) ?? '';
    expect(passTo('/mcp')).toBe(passTo('/'));
    expect(mcp).not.toMatch(/\b(hash|ip_hash|sticky)\b/);
    expect(servers(mcp)).toEqual(all);
    expect(/location\s+\/mcp\s*\{[^}]*proxy_buffering\s+off/.test(conf)).toBe(true);
    // The legacy SSE transport: stream and messages on one replica, sticky by client address.
    const sse = upstreams.get(passTo('/sse')) ?? '';
    expect(passTo('/messages')).toBe(passTo('/sse'));
    expect(sse).toMatch(/\bhash\s+\$remote_addr\b/);
    expect(servers(sse)).toEqual(all);
  });

  it("each replica's REDIS_URL names the redis service; the config's key variables are required", () => {
    for (const name of replicas) {
      const env = environment(service(name));
      const url = new URL(env.get('REDIS_URL') ?? 'missing://');
      expect(url.protocol).toMatch(/^rediss?:$/);
      expect(Object.keys(services)).toContain(url.hostname);
      expect(str(service(url.hostname)['image'])).toMatch(/^(docker\.io\/(library\/)?)?redis:/);
      expect(url.port === '' || url.port === '6379').toBe(true);

      // The container binds 0.0.0.0, where the gateway refuses to start with no key: keys are mandatory.
      expect(keyEnvNames).toEqual(expect.arrayContaining(['AGENT_KEY', 'OPS_KEY']));
      for (const name of keyEnvNames) expect(env.get(name), name).toMatch(new RegExp(`^\\$\\{${name}:\\?[^}]*\\}$`));
      expect(env.has('LOG_LEVEL')).toBe(true);
    }
  });

  it("each replica's healthcheck probes /healthz with node, and it has time to drain on stop", () => {
    for (const name of replicas) {
      const gw = service(name);
      const test = healthTest(gw);
      expect(test).toBeDefined();
      expect(test).toContain('/healthz');
      expect(test).toMatch(/^node\s/);
      expect(test).not.toMatch(/\b(curl|wget)\b/);
      expect(test?.includes(`:${exposed[0]}/`) || test?.includes(`||${exposed[0]}`)).toBe(true);
      // server.ts: drain (server.drainTimeoutMs, 10 s by default) then a 5 s force-exit margin.
      const grace = str(gw['stop_grace_period']);
      expect(grace, 'stop_grace_period').toBeDefined();
      expect(seconds(grace ?? '')).toBeGreaterThanOrEqual(15);
    }
  });
});
