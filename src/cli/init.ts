import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig, ConfigError } from '../config/load.js';
import { loadToolText } from '../tools/loader.js';
import { GatewayError } from '../errors.js';
import { parseTemplate } from '../util/template.js';
import { hasDotSegment, renderUrl } from '../util/url-template.js';
import type { Env } from '../util/env.js';
import { isSecretName } from './secrets.js';
import type { InitArgs } from './init-args.js';

/** What `toolgate init` did: the file written and what to do next, or why nothing was written. */
export type InitOutcome = { ok: true; file: string; name: string; next: string } | { ok: false; message: string };

const fail = (message: string): InitOutcome => ({ ok: false, message });

/** Writes a first tool file into tools.d, validated by the server's own loader; never overwrites. */
export function runInit(args: InitArgs, env: Env): InitOutcome {
  let dir = args.toolsDir;
  if (dir === undefined) {
    try {
      dir = loadConfig({ file: args.config, env }).config.tools.dir;
    } catch (e) {
      if (e instanceof ConfigError) return fail(`the config does not load, so tools.d is unknown (give --tools-dir):\n${e.message}`);
      throw e;
    }
  }
  const made = args.fromUrl !== undefined ? fromUrl(args.fromUrl, args.method, args.name) : fromMcp(args.fromMcp ?? '', args.name);
  if ('message' in made) return fail(made.message);
  const file = join(dir, `${made.name}.yaml`);
  const text = `# Written by toolgate init; edit freely (see README, "Your first tool").\n${stringify(made.doc)}`;
  // The server's own loader, on the text as it will be on disk (env expanded as the gateway will).
  const { defaults, port } = configFor(args, env);
  const loaded = loadToolText(file, text, { dir, env, secrets: new Set(), defaults });
  if (loaded.problems.length > 0) {
    return fail(`the tool would not load:\n${loaded.problems.map((p) => `  ${p.path || '/'}: ${p.message}`).join('\n')}`);
  }
  try {
    writeFileSync(file, text, { flag: 'wx' }); // wx: an existing file is never replaced
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return fail(`${file} exists: not overwritten (choose another --name, or edit that file)`);
    return fail(`cannot write ${file}: ${code ?? String(e)}`);
  }
  // The next steps name the port the gateway will listen on (PORT, else the config's).
  return { ok: true, file, name: made.name, next: made.next(file).replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${port}`) };
}

function configFor(args: InitArgs, env: Env) {
  let config;
  try {
    config = loadConfig({ file: args.config, env }).config;
  } catch {
    config = loadConfig({ env: { TOOLGATE_CONFIG: '' } }).config; // --tools-dir given: the embedded defaults
  }
  return { defaults: config.defaults, port: config.server.port };
}

/** A word for a shell line in '…' (JSON may hold a quote). */
const sq = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

type Made = { name: string; doc: Record<string, unknown>; next: (file: string) => string } | { message: string };

/** A segment of a tool name: `[a-z0-9_-]`, from any text. */
const segment = (s: string): string => s.toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'tool';
const NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

function fromUrl(raw: string, method: 'GET' | 'POST', wanted: string | undefined): Made {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { message: `not an absolute URL: ${JSON.stringify(raw)} (write it as https://host/path)` };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { message: `the gateway calls http(s) backends only, not ${u.protocol}` };
  if (u.username !== '' || u.password !== '') {
    return { message: 'the URL carries credentials (user:password@): they are not written into tools.d. Give the URL without them and add to the file\n  headers: { authorization: "Basic ${env:MY_API_BASIC}" }\nwith the variable set where the gateway runs' };
  }
  if (u.hash !== '') return { message: 'the URL has a #fragment, which is never sent to a server: leave it out' };
  // The gateway refuses these at call time (a dot segment would climb out of the tool's path); URL parsing would hide them.
  if (hasDotSegment(raw.replace(/[?#].*$/, '').replace(/^[a-z]+:\/\/[^/]*/i, '')) || /%2e/i.test(u.pathname)) {
    return { message: "the URL's path has a '.' or '..' segment, which the gateway refuses to send: give the path as the server should see it" };
  }
  const host = /^[\d.]+$|^\[|^localhost$/.test(u.hostname) ? 'local' : (u.hostname.split('.').filter((p) => p !== 'www' && p !== 'api')[0] ?? 'api');
  const name = wanted ?? `${segment(host)}.${segment(u.pathname.split('/').filter(Boolean).pop() ?? 'get')}`;
  if (!NAME.test(name)) return { message: `invalid tool name ${JSON.stringify(name)}: dot-separated segments of [a-z0-9_-] (e.g. weather.current)` };
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const secrets: string[] = [];
  const query: string[] = [];
  const example: Record<string, unknown> = {};
  for (const [key, value] of u.searchParams) {
    const k = encodeURIComponent(key);
    if (isSecretName(key)) {
      const variable = `${name}_${key}`.toUpperCase().replace(/[^A-Z0-9_]+/g, '_').replace(/^(?=[0-9])/, 'API_');
      secrets.push(variable);
      query.push(`${k}=\${env:${variable}}`);
      continue;
    }
    const arg = segment(key);
    if (arg in properties) return { message: `the query parameter ${JSON.stringify(key)} appears twice: give it once` };
    properties[arg] = { type: 'string', description: `query parameter ${key}`, ...(value !== '' ? { examples: [value] } : {}) };
    required.push(arg);
    example[arg] = value;
    query.push(`${k}={{${arg}}}`);
  }
  if (method === 'POST') {
    properties['body'] = { type: 'object', description: 'the JSON body sent to the upstream', additionalProperties: true };
    example['body'] = {};
  }
  const url = `${u.origin}${u.pathname}${query.length > 0 ? `?${query.join('&')}` : ''}`;
  // The gateway's own URL rendering, with example arguments: what it would refuse, refused now.
  try {
    renderUrl(parseTemplate(url.replace(/\$\{env:[^}]*\}/g, 'x')), example);
  } catch (e) {
    if (e instanceof GatewayError) return { message: `the gateway would refuse this URL at call time: ${e.message}` };
    throw e;
  }
  const doc: Record<string, unknown> = {
    name,
    description: `Calls ${method} ${u.origin}${u.pathname}. (Written by toolgate init: say here what it does, for the model.)`,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    sideEffect: method === 'GET' ? 'read' : 'write',
    timeoutMs: 10000,
    backends: [{ id: 'upstream', http: { method, url, ...(method === 'POST' ? { body: '{{body}}' } : {}) } }],
  };
  return {
    name,
    doc,
    next: (file) => {
      const lines = secrets.length > 0
        ? [`Secret query values were not written: set ${secrets.join(', ')} where the gateway runs (${file} reads them as \${env:…}).`]
        : [];
      return [...lines, ...callHelp(name, example)].join('\n');
    },
  };
}

/** `"node server.mjs --flag 'a b'"` → words, with '…' and "…" quoting as a shell would (no expansion). */
export function splitCommandLine(line: string): string[] | undefined {
  const words: string[] = [];
  let cur: string | undefined;
  let quote: string | undefined;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else cur = (cur ?? '') + ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      cur ??= '';
    } else if (/\s/.test(ch)) {
      if (cur !== undefined) words.push(cur);
      cur = undefined;
    } else cur = (cur ?? '') + ch;
  }
  if (quote) return undefined;
  if (cur !== undefined) words.push(cur);
  return words;
}

function fromMcp(line: string, wanted: string | undefined): Made {
  const words = splitCommandLine(line);
  if (!words || words.length === 0) return { message: `not a command line: ${JSON.stringify(line)} (an unclosed quote, or empty)` };
  const [command, ...args] = words as [string, ...string[]];
  const script = args.find((a) => !a.startsWith('-') && a !== '-y') ?? command;
  const name = wanted ?? segment(basename(script).replace(/\.[cm]?[jt]s$/, '').replace(/^@[^/]*\//, '').replace(/^server-/, ''));
  if (!/^[a-z0-9_-]{1,64}$/.test(name)) return { message: `invalid server name ${JSON.stringify(name)}: [a-z0-9_-], at most 64 characters` };
  const secretArg = args.find((a) => /^--?[a-z-]*(token|key|secret|password)[a-z-]*=./i.test(a));
  if (secretArg) return { message: `the argument ${JSON.stringify(secretArg.replace(/=.*$/, '=…'))} looks like a secret: not written into tools.d. Pass it through the server's environment instead (env: { NAME: "\${env:NAME}" } in the file)` };
  const doc = { kind: 'mcp-server', name, transport: 'stdio', command, args, timeoutMs: 30000 };
  return {
    name,
    doc,
    next: () => [
      `Its tools are named ${name}.<tool>: list them with`,
      `  curl -s 'http://127.0.0.1:8080/v1/tools'`,
      `(narrow them with include: [...] in the file; an unannotated tool is gated until an override says sideEffect: read).`,
      ...callHelp(`${name}.<tool>`, {}),
    ].join('\n'),
  };
}

function callHelp(name: string, example: Record<string, unknown>): string[] {
  const args = JSON.stringify(example);
  return [
    'Start the gateway (npm start; with PORT=9000 it listens there: run init with the same PORT, or change the port below), and call it over REST:',
    `  curl -s -X POST 'http://127.0.0.1:8080/v1/tools/${name}/call' -H 'content-type: application/json' -d ${sq(JSON.stringify({ arguments: example }))}`,
    'or through an MCP client at /mcp (the v2 SDK client in scripts/mcp-call.mjs; any MCP client works):',
    `  node scripts/mcp-call.mjs 'http://127.0.0.1:8080/mcp' ${sq(name)} ${sq(args)}`,
  ];
}
