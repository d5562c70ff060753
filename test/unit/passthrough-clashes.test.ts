import { describe, expect, it } from 'vitest';
import { passthroughClashes } from '../../src/mcp/import.js';
import type { PassthroughNames } from '../../src/mcp/passthrough.js';
import type { McpServerEntry } from '../../src/tools/mcp-file.js';
import type { McpServerFile } from '../../src/tools/mcp-server-schema.js';

// (b) Two servers with `prefix: ""` giving one resource URI, template or prompt name: a problem on
// the later server's file (the first keeps it), as a tool name clash is.

const entry = (name: string, spec: Partial<McpServerFile> = {}): McpServerEntry => ({
  spec: { name, prefix: '', transport: 'stdio', command: 'node', ...spec } as McpServerFile,
  file: `/tools.d/${name}.yaml`,
  pointer: '',
  hash: name,
  lineOf: () => 1,
});
const names = (n: Partial<PassthroughNames>): PassthroughNames => ({ resources: [], templates: [], prompts: [], ...n });

describe('passthrough clashes at import', () => {
  it('the later file gets one problem per clashing URI, template and prompt; the first none', () => {
    const problems = passthroughClashes([
      { entry: entry('a'), names: names({ resources: ['demo://x', 'demo://only-a'], templates: ['demo://t/{id}'], prompts: ['hello'] }) },
      { entry: entry('b'), names: names({ resources: ['demo://x'], templates: ['demo://t/{id}'], prompts: ['hello', 'own'] }) },
    ]);
    expect(problems.map((p) => p.file)).toEqual(['/tools.d/b.yaml', '/tools.d/b.yaml', '/tools.d/b.yaml']);
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^resource 'demo:\/\/x' clashes with the one MCP server 'a' \(\/tools\.d\/a\.yaml\) gives without prefix/),
      expect.stringMatching(/^resource template 'demo:\/\/t\/\{id\}' clashes/),
      expect.stringMatching(/^prompt 'hello' clashes/),
    ]);
    expect(problems[0]).toMatchObject({ line: 1, path: '' });
  });

  it('a server with a prefix, a server file that excludes the name, or one not listed yet clashes with none', () => {
    const clash = { resources: ['demo://x'], prompts: ['hello'] };
    expect(passthroughClashes([
      { entry: entry('a'), names: names(clash) },
      { entry: entry('b', { prefix: 'b' }), names: names(clash) },
      { entry: entry('c', { resources: { exclude: ['demo://*'] }, prompts: { include: ['other'] } }), names: names(clash) },
      { entry: entry('d'), names: undefined },
    ])).toEqual([]);
    // The name of a server without `prefix` is its prefix: not a clash either.
    expect(passthroughClashes([{ entry: entry('a'), names: names(clash) }, { entry: entry('e', { prefix: undefined }), names: names(clash) }])).toEqual([]);
  });

  it('a name one server lists twice is no clash with itself', () => {
    expect(passthroughClashes([{ entry: entry('a'), names: names({ prompts: ['p', 'p'] }) }])).toEqual([]);
  });
});
