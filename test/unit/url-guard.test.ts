import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileGuard, type GuardVerdict } from '../../src/guards/index.js';
import { isPrivateHost, type LookupAll } from '../../src/guards/url.js';
import type { GuardFile } from '../../src/tools/schema.js';
import { DnsServer } from '../helpers/dns-server.js';

/** The URL guard (SSRF) against parser-differential inputs, the classic bypass list, and DNS. */
const check = (g: Omit<GuardFile, 'arg'>, value: unknown, lookup?: LookupAll): Promise<GuardVerdict> =>
  Promise.resolve(compileGuard({ arg: 'url', ...g }, lookup ? { lookup } : {}).check(value));
const anyPublic = { urlHosts: [] };
const problemOf = async (value: unknown, g: Omit<GuardFile, 'arg'> = anyPublic): Promise<string | undefined> => {
  const v = await check(g, value);
  return v.ok ? undefined : v.problem;
};

describe('URL guard: one reading, and the checked URL is the one sent', () => {
  it.each([
    ['https://api.example.com/v1', 'https://api.example.com/v1'],
    ['HTTPS://API.Example.COM/v1?q=1#top', 'https://api.example.com/v1?q=1#top'],
    ['http://example.com', 'http://example.com/'],
    ['http://example.com?x=1', 'http://example.com/?x=1'],
    ['http://example.com:80/x', 'http://example.com/x'],
    ['https://example.com:443/x', 'https://example.com/x'],
    ['https://example.com:8443/x', 'https://example.com:8443/x'],
    ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
    ['http://example.com/@evil.com', 'http://example.com/@evil.com'],
    ['http://evil.com#@good.com', 'http://evil.com/#@good.com'],
    ['http://example.com./', 'http://example.com./'],
    ['http://münchen.de/Köln?q=ä', 'http://xn--mnchen-3ya.de/K%C3%B6ln?q=%C3%A4'],
    ['http://example.com/"<>`{}', 'http://example.com/%22%3C%3E%60%7B%7D'],
    ['http://8.8.8.8/', 'http://8.8.8.8/'],
    ['http://[2606:4700:4700::1111]/', 'http://[2606:4700:4700::1111]/'],
    ['http://[::ffff:8.8.8.8]/', 'http://[::ffff:808:808]/'],
    ['http://[64:ff9b::8.8.8.8]/', 'http://[64:ff9b::808:808]/'],
    // public names that point at loopback: only resolve: true can tell (below)
    ['http://127.0.0.1.nip.io/', 'http://127.0.0.1.nip.io/'],
    ['http://localtest.me/', 'http://localtest.me/'],
    ['http://localhost.example.com/', 'http://localhost.example.com/'],
  ])('allows %s and sends %s', async (raw, href) => {
    expect(await check(anyPublic, raw)).toEqual({ ok: true, value: href });
  });

  it.each([
    // parsed as example.com by WHATWG, as 127.0.0.1 (userinfo "example.com\") by RFC 3986 parsers
    ['http://example.com\\@127.0.0.1/', 'backslash'],
    ['http://example.com\\@169.254.169.254/latest/meta-data/', 'backslash'],
    ['http://127.0.0.1\\@example.com/', 'backslash'],
    ['http:\\\\example.com/', 'backslash'],
    ['http://example.com/a\\b', 'backslash'],
    // whitespace and controls WHATWG strips silently
    ['http://exam\tple.com/', 'whitespace'],
    ['http://127.0.0.1\n.example.com/', 'whitespace'],
    ['http://example.com/\r\nHost: evil', 'whitespace'],
    [' http://example.com/', 'whitespace'],
    ['http://example.com/ x', 'whitespace'],
    ['http://example.com\u0000.evil/', 'whitespace'],
    ['http://exam\u00adple.com/', 'invisible'],
    ['http://example.com\u200b/', 'invisible'],
    ['http://example.com\u3000/', 'invisible'],
    ['http://\ud800example.com/', 'Unicode'],
    // userinfo: WHATWG takes the last '@', RFC 3986 the first
    ['http://user:pw@example.com/', 'credentials'],
    ['http://good.com@evil.com/', 'credentials'],
    ['http://a@b@c.com/', 'credentials'],
    ['http://@example.com/', 'credentials'],
    ['http://example.com:80@127.0.0.1/', 'credentials'],
    // percent-escapes in the host are decoded by WHATWG only
    ['http://ex%61mple.com/', 'percent-escapes in the host'],
    ['http://127%2e0%2e0%2e1/', 'percent-escapes in the host'],
    ['http://[fe80::1%25eth0]/', 'percent-escapes in the host'],
    ['http://example.com/%00', '%00'],
    ['http://example.com/?a=%00', '%00'],
    // scheme forms WHATWG repairs and others do not
    ['http:/example.com/', "start with 'http://'"],
    ['http:example.com', "start with 'http://'"],
    ['http:///example.com/', 'no host'],
    ['http://', 'no host'],
    ['http://:80/', 'no host'],
    ['//example.com/', 'absolute'],
    ['example.com', 'absolute'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://127.0.0.1:6379/_FLUSHALL', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['ftp://example.com/', 'scheme'],
    // ports
    ['http://example.com:0/', 'port'],
    ['http://example.com:65536/', 'port'],
    ['http://example.com:/', 'port'],
    ['http://example.com:8o/', 'port'],
    ['http://a:1:2/', "more than one ':'"],
    ['http://[::1/', 'unclosed'],
    ['http://[::1]x/', 'after the IPv6'],
    // IPv4 in forms that inet_aton and WHATWG read as an address and other parsers as a name
    ['http://2130706433/', 'another form'],
    ['http://2852039166/', 'another form'],
    ['http://0x7f000001/', 'another form'],
    ['http://0xA9FEA9FE/', 'another form'],
    ['http://017700000001/', 'another form'],
    ['http://0x7f.1/', 'another form'],
    ['http://127.1/', 'another form'],
    ['http://0/', 'another form'],
    ['http://0177.0.0.1/', 'another form'],
    ['http://127.000.000.001/', 'another form'],
    ['http://127.0.0.1./', 'another form'],
    ['http://127。0。0。1/', 'another form'],
    ['http://１２７.０.０.１/', 'another form'],
    // look-alikes that IDNA maps to ASCII
    ['http://ｌｏｃａｌｈｏｓｔ/', 'look-alike'],
    ['http://ｅｘａｍｐｌｅ.com/', 'look-alike'],
    ['http://example。com/', 'separator'],
    ['http://a..b.com/', 'not a DNS name'],
    ['http://.example.com/', 'not a DNS name'],
    ['http://example.com;.evil.com/', 'not a DNS name'],
    ['http://exa*mple.com/', 'not a DNS name'],
    [`http://example.com/${'a'.repeat(9000)}`, 'longer'],
  ])('refuses %j (%s)', async (raw, why) => {
    expect(await problemOf(raw)).toContain(why);
  });

  it('refuses a value that is not a string', async () => {
    expect(await problemOf({ href: 'https://example.com/' })).toContain('not a URL string');
  });
});

describe('URL guard: private, special-purpose and internal hosts', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://127.0.0.1:8080/admin',
    'http://10.0.0.5/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://0.0.0.0/',
    'http://100.64.0.1/',
    'http://192.0.0.1/',
    'http://192.0.2.1/',
    'http://198.18.0.1/',
    'http://198.19.255.1/',
    'http://198.51.100.7/',
    'http://203.0.113.9/',
    'http://224.0.0.1/',
    'http://240.0.0.1/',
    'http://255.255.255.255/',
    'http://[::]/',
    'http://[::1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:127.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::127.0.0.1]/',
    'http://[::8.8.8.8]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[64:ff9b::10.0.0.1]/',
    'http://[64:ff9b:1::808:808]/',
    'http://[2002:7f00:1::1]/',
    'http://[2002:a9fe:a9fe::]/',
    'http://[2001::1]/',
    'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    'http://[2001:db8::1]/',
    'http://[3fff::1]/',
    'http://[100::1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[fe80::1]/',
    'http://[fec0::1]/',
    'http://[ff02::1]/',
    'http://[::ffff:0:7f00:1]/',
  ])('refuses the special address %s', async (url) => {
    expect(await problemOf(url)).toMatch(/private, loopback, metadata or special-purpose address/);
  });

  it.each([
    'http://localhost/',
    'http://LOCALHOST/',
    'http://localhost./',
    'http://foo.localhost/',
    'http://foo.localhost./',
    'http://a.b.localhost:8080/',
    'http://localhost.localdomain/',
    'http://ip6-localhost/',
    'http://metadata/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://instance-data/',
    'http://kubernetes/',
    'http://api.internal/',
    'http://printer.local/',
    'http://router.lan/',
    'http://nas.home.arpa/',
    'http://wiki.intranet/',
    'http://git.corp/',
  ])('refuses the internal name %s', async (url) => {
    expect(await problemOf(url)).toContain('local or internal name');
  });

  it('allowPrivate lets internal hosts through, still in one reading', async () => {
    expect(await check({ urlHosts: [], allowPrivate: true }, 'http://127.0.0.1:8080/x')).toEqual({ ok: true, value: 'http://127.0.0.1:8080/x' });
    expect(await check({ urlHosts: [], allowPrivate: true }, 'http://foo.localhost/')).toEqual({ ok: true, value: 'http://foo.localhost/' });
    expect(await problemOf('http://127.1/', { urlHosts: [], allowPrivate: true })).toContain('another form');
  });

  it('isPrivateHost knows the names and addresses', () => {
    expect(isPrivateHost('[fd00::1]')).toBe(true);
    expect(isPrivateHost('fe80::1')).toBe(true);
    expect(isPrivateHost('64:ff9b::a00:1')).toBe(true);
    expect(isPrivateHost('2606:4700::1111')).toBe(false);
    expect(isPrivateHost('x.localhost')).toBe(true);
    expect(isPrivateHost('example.com')).toBe(false);
  });
});

describe('URL guard: the allow-list', () => {
  const only = { urlHosts: ['good.com', '*.good.com'] };
  it.each([
    ['https://good.com/x', 'https://good.com/x'],
    ['https://API.Good.com/x', 'https://api.good.com/x'],
    ['https://good.com./x', 'https://good.com./x'],
  ])('allows %s', async (raw, href) => {
    expect(await check(only, raw)).toEqual({ ok: true, value: href });
  });
  it.each(['http://evil.com#@good.com', 'http://good.com.evil.com/', 'http://evilgood.com/', 'http://good.com@evil.com/', 'http://evil.com\\@good.com/', 'http://evil.com/?good.com'])(
    'refuses %s',
    async (raw) => {
      expect(await problemOf(raw, only)).toBeDefined();
    },
  );
  it('matches the punycode form of an IDN host', async () => {
    expect(await check({ urlHosts: ['xn--mnchen-3ya.de'] }, 'https://münchen.de/')).toEqual({ ok: true, value: 'https://xn--mnchen-3ya.de/' });
  });
  it('an allow-listed host is still refused when it is internal', async () => {
    expect(await problemOf('http://metadata.google.internal/', { urlHosts: ['*.internal'] })).toContain('internal name');
  });
});

describe('URL guard: resolve: true, against a real DNS server on 127.0.0.1', () => {
  let dns: DnsServer;
  beforeAll(async () => {
    dns = await new DnsServer().start();
    dns
      .set('public.test', ['93.184.216.34'])
      .set('v6.test', ['2606:4700:4700::1111'])
      .set('127.0.0.1.nip.io', ['127.0.0.1'])
      .set('localtest.me', ['127.0.0.1', '::1'])
      .set('mixed.test', ['93.184.216.34', '10.0.0.7'])
      .set('metadata.test', ['169.254.169.254'])
      .set('nat64.test', ['64:ff9b::a9fe:a9fe'])
      .set('mapped.test', ['::ffff:127.0.0.1'])
      .set('sitelocal.test', ['fec0::1'])
      .set('rebind.test', ['93.184.216.34'], ['127.0.0.1']);
  });
  afterAll(() => dns.close());
  const resolving = { urlHosts: [], resolve: true };

  it('allows a name whose every address is public, and sends the URL unchanged', async () => {
    expect(await check(resolving, 'http://public.test/x', dns.lookup())).toEqual({ ok: true, value: 'http://public.test/x' });
    expect(await check(resolving, 'https://v6.test/', dns.lookup())).toEqual({ ok: true, value: 'https://v6.test/' });
    expect(dns.queries).toContain('A public.test');
  });

  it.each(['127.0.0.1.nip.io', 'localtest.me', 'mixed.test', 'metadata.test', 'nat64.test', 'mapped.test', 'sitelocal.test'])(
    'refuses %s: one of its addresses is private or special',
    async (host) => {
      const v = await check(resolving, `http://${host}/`, dns.lookup());
      expect(v).toEqual({ ok: false, problem: `host ${host} resolves to a private, loopback, metadata or special-purpose address` });
    },
  );

  it('refuses a name that does not resolve', async () => {
    const v = await check(resolving, 'http://nowhere.test/', dns.lookup());
    expect(v.ok ? '' : v.problem).toContain('does not resolve (ENOTFOUND)');
  });

  it('judges every call on a fresh answer: a name rebound to 127.0.0.1 is refused at the next call', async () => {
    expect((await check(resolving, 'http://rebind.test/', dns.lookup())).ok).toBe(true);
    expect((await check(resolving, 'http://rebind.test/', dns.lookup())).ok).toBe(false);
  });

  it('without resolve: the same names pass (they are public names)', async () => {
    expect((await check(anyPublic, 'http://127.0.0.1.nip.io/', dns.lookup())).ok).toBe(true);
  });

  it('fails closed on an answer that is no IP address, and judges mapped and NAT64 answers by their IPv4 (a custom resolver)', async () => {
    for (const address of ['127.000.000.001', '0177.0.0.1', '2130706433', 'localhost', '', '::ffff:127.0.0.1', '64:ff9b::a9fe:a9fe', 'fd00:ec2::254']) {
      const lookup: LookupAll = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
      const v = await check(resolving, 'http://public.example.com/', lookup);
      expect(v.ok, address).toBe(false);
    }
    const fine: LookupAll = async () => [{ address: '::ffff:8.8.8.8', family: 6 }];
    expect((await check(resolving, 'http://public.example.com/', fine)).ok).toBe(true);
  });

  it('a file may not ask for resolve together with allowPrivate', async () => {
    const { guardKindProblem } = await import('../../src/guards/index.js');
    expect(guardKindProblem({ arg: 'url', urlHosts: [], resolve: true, allowPrivate: true })).toContain('choose one');
    expect(guardKindProblem({ arg: 'url', resolve: true })).toBeUndefined();
    expect(guardKindProblem({ arg: 'p', pathPrefixes: ['/x'], resolve: true })).toContain('exactly one');
    expect(guardKindProblem({ arg: 'p', deny: ['x'], percentDecoded: true })).toContain('belong to a pathPrefixes guard');
  });
});
