// Types of zh-native.mjs, for the unit test that measures the same baseline as the bench.
import type { PrefilterTool } from '../../src/prefilter/types.js';

export interface ZhQuery {
  query: string;
  gold: string[];
}
export function loadZhNative(root: URL, opaque?: boolean): { tools: (PrefilterTool & { params: { name: string; description: string }[] })[]; queries: ZhQuery[] };
export function bigramWords(text: string): string[];
export function bigramBm25(tools: readonly PrefilterTool[]): { search(query: string, opts: { k: number }): { name: string; score: number }[] };
