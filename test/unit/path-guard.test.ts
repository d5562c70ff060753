import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileGuard, type GuardVerdict } from '../../src/guards/index.js';
import type { GuardFile } from '../../src/tools/schema.js';

/**
 * The path guard against hostile paths: real symbolic links in a temp dir (the last part not yet
 * there, dangling links, links climbing with '..', loops) and every encoding that one parser reads
 * as inside and another as outside.
 */
const check = (g: Omit<GuardFile, 'arg'>, value: unknown): Promise<GuardVerdict> => Promise.resolve(compileGuard({ arg: 'path', ...g }).check(value));
const problemOf = async (g: Omit<GuardFile, 'arg'>, value: unknown): Promise<string | undefined> => {
  const v = await check(g, value);
  return v.ok ? undefined : v.problem;
};

describe('path guard: one reading of the text', () => {
  const g = { pathPrefixes: ['/srv/shared'] };
  it.each(['/srv/shared', '/srv/shared/a.txt', '/srv/shared/dir/../b.txt', 'srv/shared/c', '/srv/shared/./d', '/srv/shared/', '//srv//shared//e', '/srv/shared/naïve 文件.txt'])(
    'allows %s, and sends it exactly as written',
    async (p) => {
      const v = await check(g, p);
      expect(v).toEqual({ ok: true, value: p });
    },
  );

  it.each([
    ['/srv/shared/../../etc/passwd', 'leaves'],
    ['../etc/passwd', 'climbs above /'],
    ['../srv/shared/x', 'climbs above /'],
    ['/srv/shared-evil/x', 'leaves'],
    ['/etc/passwd', 'leaves'],
    // One invalid escape used to stop all decoding, so the valid ones after it were never judged.
    ['/srv/shared/%2e%2e/%2e%2e/etc/passwd%zz', "'%'"],
    ['/srv/shared/%2e%2e/%2e%2e/etc/passwd', "'%'"],
    ['/srv/shared/..%2f..%2fetc/passwd', "'%'"],
    ['/srv/shared/%252e%252e/secret', "'%'"],
    // Judged inside after decoding, but a Linux upstream writes the sibling /srv/shared%2fnew.txt.
    ['/srv/shared%2fnew.txt', "'%'"],
    ['/srv/shared/a%20b.txt', "'%'"],
    ['/srv/shared/100%.txt', "'%'"],
    // A backslash is a file name character on Linux (a sibling) and a separator on Windows.
    ['/srv/shared\\new.txt', 'backslash'],
    ['/srv/shared\\..\\..\\etc\\passwd', 'backslash'],
    ['/srv/shared/\u0000/x', 'control'],
    ['/srv/shared/a\nb', 'control'],
    ['/srv/shared/a\rb', 'control'],
    ['/srv/shared/a\u007fb', 'control'],
    ['/srv/shared/a\u0085b', 'control'],
    ['/srv/shared/\ud800', 'Unicode'],
    ['', 'empty'],
    [`/srv/shared/${'a/'.repeat(2100)}`, 'longer than 4096'],
  ])('refuses %j (%s)', async (p, why) => {
    expect(await problemOf(g, p)).toContain(why);
  });

  it('refuses a value that is not a string, and checks each item of a list', async () => {
    expect(await problemOf(g, 42)).toContain('not a path string');
    const guard = compileGuard({ arg: 'paths', pathPrefixes: ['/srv/shared'] });
    expect(guard.eachItem).toBe(true);
  });

  it('percentDecoded: the decoded path is judged; invalid, double and separator escapes are refused', async () => {
    const d = { pathPrefixes: ['/srv/shared'], percentDecoded: true };
    expect(await check(d, '/srv/shared/a%20b.txt')).toEqual({ ok: true, value: '/srv/shared/a%20b.txt' });
    expect(await check(d, '/srv/shared/%E6%96%87.txt')).toEqual({ ok: true, value: '/srv/shared/%E6%96%87.txt' });
    expect(await problemOf(d, '/srv/shared/%2e%2e/%2e%2e/etc/passwd')).toContain('leaves');
    expect(await problemOf(d, '/srv/shared/%2e%2e/%2e%2e/etc/passwd%zz')).toContain('invalid percent-escape');
    expect(await problemOf(d, '/srv/shared/100%.txt')).toContain('invalid percent-escape');
    expect(await problemOf(d, '/srv/shared/%252e%252e/%252e%252e/etc')).toContain('twice');
    expect(await problemOf(d, '/srv/shared/x%252fy')).toContain('twice');
    expect(await problemOf(d, '/srv/shared%2fnew.txt')).toContain('encoded separator');
    expect(await problemOf(d, '/srv/shared/a%5Cb')).toContain('encoded separator');
    expect(await problemOf(d, '/srv/shared/a%00b')).toContain('control');
    expect(await problemOf(d, '/srv/shared/%C0%AE%C0%AE/x')).toContain('UTF-8');
  });

  it('backslashSeparator: a backslash is judged as a separator', async () => {
    const w = { pathPrefixes: ['/srv/shared'], backslashSeparator: true };
    expect(await check(w, '/srv/shared\\sub\\x.txt')).toEqual({ ok: true, value: '/srv/shared\\sub\\x.txt' });
    expect(await problemOf(w, '/srv/shared\\..\\..\\etc\\passwd')).toContain('leaves');
    expect(await problemOf(w, '/srv/shared-evil\\x')).toContain('leaves');
  });

  it('backslashSeparator: a drive letter or a stream (Windows reads C:\\x as absolute) is refused', async () => {
    const w = { pathPrefixes: ['/srv/shared'], backslashSeparator: true, relativeTo: '/srv/shared' };
    for (const p of ['C:\\Windows\\System32\\evil.dll', 'c:/Windows/x', 'D:x', '/srv/shared/C:\\x', 'a.txt:stream', '/srv/shared/a.txt::$DATA']) {
      expect(await problemOf(w, p)).toContain("':'");
    }
    expect(await check({ pathPrefixes: ['/srv/shared'] }, '/srv/shared/a:b')).toEqual({ ok: true, value: '/srv/shared/a:b' });
  });

  it('relativeTo: a relative path is judged against the upstream working directory, and may not climb above it', async () => {
    const r = { pathPrefixes: ['/srv/shared'], relativeTo: '/srv/shared' };
    expect(await check(r, 'a/b.txt')).toEqual({ ok: true, value: 'a/b.txt' });
    expect(await problemOf(r, '../shared/x')).toContain('climbs above /srv/shared');
    expect(await problemOf(r, 'a/../../x')).toContain('climbs above');
  });
});

describe('path guard: where the path really lands (symbolic links)', () => {
  let root: string;
  let shared: string;
  const g = () => ({ pathPrefixes: [shared] });

  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-path-')));
    shared = join(root, 'shared');
    mkdirSync(join(shared, 'sub', 'deeper'), { recursive: true });
    mkdirSync(join(root, 'private', 'a', 'b'), { recursive: true });
    writeFileSync(join(shared, 'ok.txt'), 'ok');
    symlinkSync('/etc', join(shared, 'link-etc'));
    symlinkSync('/etc/toolgate-does-not-exist', join(shared, 'dangling'));
    symlinkSync(join(root, 'private', 'nothing-here', 'x'), join(shared, 'dangling-deep'));
    symlinkSync('../..', join(shared, 'sub', 'upup'));
    symlinkSync(join(root, 'private', 'a', 'b'), join(shared, 'deep'));
    symlinkSync('sub/deeper', join(shared, 'inside'));
    symlinkSync('loop2', join(shared, 'loop1'));
    symlinkSync('loop1', join(shared, 'loop2'));
    symlinkSync('self', join(shared, 'self'));
    symlinkSync(shared, join(root, 'alias'));
    // a chain of 30 links that ends inside: within the kernel's bound of 40
    for (let i = 0; i < 30; i++) symlinkSync(i === 29 ? 'sub' : `chain${i + 1}`, join(shared, `chain${i}`));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('allows files, new files and new directories inside, and links that stay inside', async () => {
    for (const p of ['ok.txt', 'new.txt', 'newdir/newer/new.txt', 'inside/new.txt', 'inside/../ok.txt', 'sub/deeper/../x', 'chain0/x']) {
      expect(await problemOf(g(), `${shared}/${p}`), p).toBeUndefined();
    }
  });

  it.each([
    // the last part does not exist yet: a write tool would create /etc/new.conf
    ['link-etc/new.conf', 'symbolic link'],
    ['link-etc/passwd', 'symbolic link'],
    ['link-etc', 'symbolic link'],
    // a dangling link: writing it creates its target
    ['dangling', 'symbolic link'],
    ['dangling-deep', 'symbolic link'],
    // sub/upup -> ../.. climbs from sub to the parent of shared
    ['sub/upup/private/a', 'symbolic link'],
    ['sub/upup/new-in-root', 'symbolic link'],
    // after a link, '..' is the parent of its target (root/private/a), not of the link
    ['deep/../x', 'symbolic link'],
    ['deep/..', 'symbolic link'],
    ['loop1/x', 'too many symbolic links'],
    ['self', 'too many symbolic links'],
  ])('refuses %s (%s)', async (p, why) => {
    expect(await problemOf(g(), `${shared}/${p}`)).toContain(why);
  });

  it('compares against the prefix’s own real location (a prefix that is itself a link)', async () => {
    const alias = join(root, 'alias');
    expect(await problemOf({ pathPrefixes: [alias] }, join(alias, 'ok.txt'))).toBeUndefined();
    expect(await problemOf({ pathPrefixes: [alias] }, join(alias, 'new', 'file'))).toBeUndefined();
    expect(await problemOf({ pathPrefixes: [alias] }, join(alias, 'link-etc', 'new.conf'))).toContain('symbolic link');
  });

  it('a relative path is resolved through links from its working directory', async () => {
    const r = { pathPrefixes: [shared], relativeTo: shared };
    expect(await problemOf(r, 'ok.txt')).toBeUndefined();
    expect(await problemOf(r, 'link-etc/new.conf')).toContain('symbolic link');
  });
});

describe('confirm rule notUnder: the same one reading', () => {
  it('asks for confirmation when a path is ambiguous, instead of judging one reading of it', async () => {
    const { compileConfirm, needsConfirmation } = await import('../../src/confirm/rule.js');
    const rule = compileConfirm({ when: [{ arg: 'path', notUnder: '/srv/tmp' }] });
    expect(await needsConfirmation(rule, { path: '/srv/tmp/a.txt' })).toBe(false);
    for (const path of ['/srv/tmp/%2e%2e/%2e%2e/etc/passwd%zz', '/srv/tmp%2fx', '/srv/tmp\\..\\..\\etc', '/srv/tmp/../etc']) {
      expect(await needsConfirmation(rule, { path }), path).toBe(true);
    }
  });

  it('asks for confirmation when a path under the prefix leads out through a symbolic link (it ungated a write to /etc)', async () => {
    const { compileConfirm, needsConfirmation } = await import('../../src/confirm/rule.js');
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-confirm-')));
    try {
      mkdirSync(join(root, 'tmp', 'sub'), { recursive: true });
      symlinkSync('/etc', join(root, 'tmp', 'link-etc'));
      symlinkSync('../..', join(root, 'tmp', 'sub', 'upup'));
      symlinkSync('/etc/toolgate-new', join(root, 'tmp', 'dangling'));
      const rule = compileConfirm({ when: [{ arg: 'path', notUnder: join(root, 'tmp') }] });
      expect(await needsConfirmation(rule, { path: join(root, 'tmp', 'sub', 'new.txt') })).toBe(false);
      for (const p of ['link-etc/new.conf', 'sub/upup/x', 'dangling']) {
        expect(await needsConfirmation(rule, { path: join(root, 'tmp', p) }), p).toBe(true);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
