import { basename } from 'node:path';
import { toPointer } from '../util/source.js';
import type { McpHttpServer, McpServerFile, McpStdioServer } from './mcp-server-schema.js';

/**
 * MCP client config files as Claude Desktop, Cursor, Windsurf, Cline (`mcpServers`) and VS Code
 * (`servers`, `inputs`) write them, read leniently: what means something to us is mapped, the
 * rest is ignored with a warning naming it, and a shape we cannot read is a problem naming the
 * server. Server names become one `[a-z0-9_-]` segment; the mapping is kept for `toolgate check`.
 */

export interface ClientServer {
  readonly spec: McpServerFile;
  readonly pointer: string;
}

/** How one entry of the file was read: its name as written and as served, or why it is skipped. */
export interface NameMapping {
  readonly from: string;
  readonly to: string | null;
  readonly pointer: string;
  readonly skipped?: string;
}

export interface ClientNote {
  readonly path: string;
  readonly message: string;
}

export interface ClientConfigResult {
  readonly servers: ClientServer[];
  readonly problems: ClientNote[];
  readonly warnings: ClientNote[];
  readonly names: NameMapping[];
}

export const SERVER_BLOCKS = ['mcpServers', 'servers'] as const;
const MAX_SERVERS = 1000;
const MAX_NAME = 64;

/** Keys each client writes that we map; everything else in an entry is ignored with a warning. */
const STDIO_KEYS = new Set(['command', 'args', 'env', 'cwd']);
const HTTP_KEYS = new Set(['url', 'serverUrl', 'headers']);
const COMMON_KEYS = new Set(['type', 'transport', 'disabled', 'timeout']);
const TRANSPORTS: Record<string, McpServerFile['transport']> = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  streamableHttp: 'streamable-http',
  sse: 'sse',
};

/** `Memory` → `memory`, `brave.search` → `brave-search`; '' when nothing usable is left. */
export function normalizeServerName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, MAX_NAME)
    .replace(/[-_]+$/, '');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const quoteList = (keys: readonly string[]) => keys.map((k) => `'${k}'`).join(', ');

/**
 * Cline writes `timeout` in seconds (its settings UI: 30 s to 1 h, default 1 min); the others
 * that write one (Claude Code's `.mcp.json`) mean milliseconds. Told apart by the file's name.
 */
function timeoutUnit(file: string): 's' | 'ms' {
  return /cline/i.test(basename(file)) ? 's' : 'ms';
}

export function readClientConfig(file: string, value: Record<string, unknown>): ClientConfigResult {
  const servers: ClientServer[] = [];
  const problems: ClientNote[] = [];
  const warnings: ClientNote[] = [];
  const names: NameMapping[] = [];
  const other = Object.keys(value).filter((k) => !(SERVER_BLOCKS as readonly string[]).includes(k) && k !== '$schema');
  if (other.length > 0) {
    const inputs = other.includes('inputs') ? " ('inputs' are VS Code prompts: write the values as ${env:NAME} instead)" : '';
    warnings.push({ path: `/${other[0]}`, message: `top-level ${other.length === 1 ? 'key' : 'keys'} ${quoteList(other)} ignored: only the servers are read${inputs}` });
  }
  const byName = new Map<string, string>();
  for (const block of SERVER_BLOCKS) {
    if (!(block in value)) continue;
    const entries = value[block];
    if (!isObject(entries)) {
      problems.push({ path: `/${block}`, message: `${block} must be an object of servers by name (found ${Array.isArray(entries) ? 'an array' : entries === null ? 'null' : typeof entries})` });
      continue;
    }
    const keys = Object.keys(entries);
    if (keys.length > MAX_SERVERS) {
      problems.push({ path: `/${block}`, message: `${keys.length} servers in one file; at most ${MAX_SERVERS}` });
      continue;
    }
    for (const from of keys) {
      const pointer = toPointer([block, from]);
      const entry = entries[from];
      const to = normalizeServerName(from);
      if (to === '') {
        problems.push({ path: pointer, message: `MCP server name ${JSON.stringify(from)} has no letter or digit: it cannot name the tools (<server>.<tool>); rename it` });
        continue;
      }
      const clash = byName.get(to);
      if (clash !== undefined) {
        problems.push({ path: pointer, message: `MCP servers ${JSON.stringify(clash)} and ${JSON.stringify(from)} both become '${to}': rename one` });
        continue;
      }
      byName.set(to, from);
      if (!isObject(entry)) {
        problems.push({ path: pointer, message: `MCP server '${from}' must be an object ({ command, args } or { url })` });
        continue;
      }
      if (entry['disabled'] === true) {
        names.push({ from, to, pointer, skipped: 'disabled: true' });
        continue;
      }
      const read = readEntry(file, from, to, pointer, entry);
      problems.push(...read.problems);
      warnings.push(...read.warnings);
      if (read.spec) {
        servers.push({ spec: read.spec, pointer });
        names.push({ from, to, pointer });
      }
    }
  }
  if (!SERVER_BLOCKS.some((b) => b in value)) problems.push({ path: '', message: 'no mcpServers (or servers) object' });
  return { servers, problems, warnings, names };
}

function readEntry(file: string, from: string, name: string, pointer: string, entry: Record<string, unknown>): { spec?: McpServerFile; problems: ClientNote[]; warnings: ClientNote[] } {
  const problems: ClientNote[] = [];
  const warnings: ClientNote[] = [];
  const at = (key: string) => `${pointer}${toPointer([key])}`;
  const bad = (key: string, message: string) => problems.push({ path: at(key), message: `MCP server '${from}': ${message}` });
  const type = entry['type'] ?? entry['transport'];
  const typeKey = 'type' in entry ? 'type' : 'transport';
  let transport: McpServerFile['transport'] | undefined;
  if (type !== undefined) {
    transport = typeof type === 'string' ? TRANSPORTS[type] : undefined;
    if (transport === undefined) bad(typeKey, `${typeKey} ${JSON.stringify(type)} is not one of ${Object.keys(TRANSPORTS).join(', ')}`);
  }
  const urlKey = 'url' in entry ? 'url' : 'serverUrl' in entry ? 'serverUrl' : undefined;
  const hasCommand = 'command' in entry;
  if (transport === undefined && type === undefined) {
    if (hasCommand) transport = 'stdio';
    else if (urlKey) transport = 'streamable-http';
    else bad('command', 'neither command (a local server) nor url (a remote one)');
  }
  if (transport === undefined) return { problems, warnings };
  const known = new Set([...COMMON_KEYS, ...(transport === 'stdio' ? STDIO_KEYS : HTTP_KEYS)]);
  const ignored = Object.keys(entry).filter((k) => !known.has(k));
  if (ignored.length > 0) {
    warnings.push({ path: at(ignored[0] as string), message: `MCP server '${from}': ${ignored.length === 1 ? 'key' : 'keys'} ${quoteList(ignored)} ignored (toolgate has no such setting for a ${transport} server)` });
  }
  const str = (key: string): string | undefined => {
    const v = entry[key];
    if (v === undefined) return undefined;
    if (typeof v === 'string' && v !== '') return v;
    bad(key, `${key} must be a non-empty string`);
    return undefined;
  };
  const map = (key: string): Record<string, string> | undefined => {
    const v = entry[key];
    if (v === undefined) return undefined;
    if (isObject(v) && Object.values(v).every((x) => typeof x === 'string')) return v as Record<string, string>;
    bad(key, `${key} must be an object of strings`);
    return undefined;
  };
  let timeoutMs: number | undefined;
  if (entry['timeout'] !== undefined) {
    const t = entry['timeout'];
    const unit = timeoutUnit(file);
    if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) bad('timeout', 'timeout must be a positive number');
    else {
      timeoutMs = Math.max(1, Math.round(unit === 's' ? t * 1000 : t));
      if (unit === 's') warnings.push({ path: at('timeout'), message: `MCP server '${from}': timeout ${t} read as seconds (Cline's unit, from the file name): timeoutMs ${timeoutMs}` });
    }
  }
  let spec: McpServerFile | undefined;
  if (transport === 'stdio') {
    const command = str('command');
    if (!hasCommand) bad('command', `type ${JSON.stringify(type)} needs a command`);
    const args = entry['args'];
    if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) bad('args', 'args must be an array of strings');
    const env = map('env');
    const cwd = str('cwd');
    if (command !== undefined) {
      const s: McpStdioServer = { kind: 'mcp-server', name, transport, command };
      if (Array.isArray(args)) s.args = args as string[];
      if (env) s.env = env;
      if (cwd) s.cwd = cwd;
      spec = s;
    }
  } else {
    const url = urlKey ? str(urlKey) : undefined;
    if (!urlKey) bad('url', `a ${transport} server needs a url`);
    else if (url !== undefined && !/^https?:\/\//.test(url)) bad(urlKey, `${urlKey} must start with http:// or https://`);
    const headers = map('headers');
    if (url !== undefined && /^https?:\/\//.test(url)) {
      // With no type, a path ending in /sse is the legacy endpoint's conventional name.
      const sse = transport === 'sse' || (type === undefined && safePath(url).endsWith('/sse'));
      const s: McpHttpServer = { kind: 'mcp-server', name, transport: sse ? 'sse' : 'streamable-http', url };
      if (headers) s.headers = headers;
      spec = s;
    }
  }
  if (problems.length > 0 || !spec) return { problems, warnings };
  if (timeoutMs !== undefined) spec.timeoutMs = timeoutMs;
  return { spec, problems, warnings };
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}
