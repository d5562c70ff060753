import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/server-process.js';

/**
 * The README's shell blocks as a newcomer pastes them, in zsh (the macOS default shell; Debian's
 * zsh here). Every ```sh block is parsed with `zsh -n`; the runnable ones (all but those marked
 * `<!-- readme-test: parse-only … -->`) run for real, in order, against the built gateway started
 * on its embedded defaults (no config file) on a port other than 8080. What the test changes in a
 * block, and only that: 8080 becomes that port, and `npm run init --` the built CLI it runs after
 * its build (npm test builds first).
 */
const REPO = resolve('.');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

interface Block {
  readonly line: number;
  readonly code: string;
  readonly run: boolean;
}

function shellBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|zsh|shell)\s*$/.test(lines[i] ?? '')) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    const marker = /<!-- readme-test: parse-only/.test(lines[start - 1] ?? '');
    blocks.push({ line: start + 1, code: body.join('\n'), run: !marker });
  }
  return blocks;
}

const blocks = shellBlocks(README);
const zsh = spawnSync('zsh', ['--version']).status === 0;

function zshRun(code: string, cwd: string, env: Record<string, string>): { status: number | null; out: string; err: string } {
  const r = spawnSync('zsh', ['-c', code], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe('README shell blocks, in zsh', () => {
  it('zsh is installed (the test needs it: apt-get install -y zsh; .ci/run installs it)', () => {
    expect(zsh).toBe(true);
  });

  it('there are shell blocks to test, and every one parses under zsh -n', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const b of blocks) {
      const r = spawnSync('zsh', ['-n', '-c', b.code], { encoding: 'utf8' });
      expect({ line: b.line, status: r.status, err: r.stderr }).toEqual({ line: b.line, status: 0, err: '' });
    }
  });

  it('the Two commands section says what the test command needs beyond Node, with the command that installs it', () => {
    const section = README.slice(README.indexOf('## Two commands'), README.indexOf('## Your first tool'));
    const line = section.split('\n').find((l) => l.includes('apt-get install -y'));
    expect(line).toBeDefined();
    for (const pkg of ['redis-server', 'prometheus', 'chromium', 'zsh']) expect(line).toContain(pkg);
    // .ci/run checks for exactly those programs.
    const ci = readFileSync(join(REPO, '.ci/run'), 'utf8');
    for (const prog of ['redis-server', 'promtool', '/usr/bin/chromium', 'zsh']) expect(ci).toContain(prog);
  });

  describe('run against a gateway on a non-default port', () => {
    let dir = '';
    let port = 0;
    let child: ChildProcess | undefined;
    let out = '';

    beforeAll(async () => {
      if (!existsSync(join(REPO, 'dist/server.js'))) throw new Error('dist/server.js is missing: run `npm run build` (npm test does)');
      dir = mkdtempSync(join(tmpdir(), 'toolgate-readme-'));
      // A fresh directory: no config/gateway.yaml, so the embedded defaults; the example tools.d copied.
      cpSync(join(REPO, 'tools.d'), join(dir, 'tools.d'), { recursive: true });
      for (const name of ['dist', 'scripts', 'node_modules']) symlinkSync(join(REPO, name), join(dir, name));
      port = await freePort();
      const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), LOG_LEVEL: 'warn' };
      for (const k of ['TOOLGATE_CONFIG', 'TOOLGATE_TOOLS_DIR', 'HOST', 'REDIS_URL']) delete env[k];
      child = spawn(process.execPath, [join(REPO, 'dist/server.js')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      for (let i = 0; i < 200; i++) {
        if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) return;
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the gateway did not become ready:\n${out}`);
    }, 30_000);

    afterAll(async () => {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child?.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const generation = async (): Promise<number> => {
      const r = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { generation?: number };
      return r.generation ?? -1;
    };

    it('every runnable block succeeds as pasted (8080 → the port), the walk ends with the new tool answering over /mcp', async () => {
      const runnable = blocks.filter((b) => b.run);
      expect(runnable.length).toBeGreaterThanOrEqual(3);
      const outputs: string[] = [];
      for (const b of runnable) {
        // Never run here: it would reinstall the checkout the test runs from.
        expect({ line: b.line, npmCi: /\bnpm ci\b/.test(b.code) }).toEqual({ line: b.line, npmCi: false });
        const code = b.code.replaceAll('8080', String(port)).replaceAll('npm run init --', 'node dist/cli/check.js init');
        const before = await generation();
        const r = zshRun(`set -e -o pipefail\n${code}`, dir, { PORT: String(port) });
        expect({ line: b.line, status: r.status, err: r.err }).toEqual({ line: b.line, status: 0, err: '' });
        outputs.push(r.out);
        if (/\binit\b/.test(code)) {
          // tools.d is watched: the next block may call the tool once the reload is done.
          for (let i = 0; i < 100 && (await generation()) === before; i++) await new Promise((res) => setTimeout(res, 50));
        }
      }
      const all = outputs.join('\n');
      // Each curl answered something real, not an error body.
      expect(all).not.toContain('"error"');
      expect(all).toContain('"function"'); // ?format=openai
      expect(all).toContain('"message":"hello"');
      // gateway.status reached this gateway on its own port (the old file called 8080: connection refused).
      expect(all).toMatch(/gateway ready: \d+ tools/);
      // The walk: the tool init wrote, called through an MCP client and over REST.
      expect(existsSync(join(dir, 'tools.d/my.health.yaml'))).toBe(true);
      const mcpLine = all.split('\n').find((l) => l.startsWith('{"content"'));
      expect(mcpLine).toBeDefined();
      expect(JSON.parse(mcpLine ?? '{}')).toMatchObject({ isError: false });
      expect(all).toContain('"tool":"my.health","status":"ok"');
    }, 120_000);
  });
});
