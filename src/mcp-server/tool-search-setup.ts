import type { Gateway } from '../gateway.js';
import type { OnSearch } from '../prefilter/search-events.js';
import type { McpNames } from './names.js';
import { listed } from './server.js';
import { ToolSearch } from './tool-search.js';

/** The tool-search mode of /mcp, when the config turns it on for anyone (globally or for a key); else undefined and /mcp is as before. */
export function toolSearchFor(gw: Gateway, names: McpNames, onSearch: OnSearch | undefined): ToolSearch | undefined {
  const search = new ToolSearch({ gw, names, listed: (t) => listed(t, names), onSearch });
  if (search.anyEnabled) return search;
  search.close();
  return undefined;
}
