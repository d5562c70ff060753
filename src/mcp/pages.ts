/** How many pages a list is followed for at most: a server that pages for ever is cut off there. */
const MAX_PAGES = 100;

/** Every page of an MCP list, following `nextCursor`; a repeated cursor or too many pages end it. */
export async function allPages<T>(one: (cursor: string | undefined) => Promise<[T[], string | undefined]>): Promise<T[]> {
  const out: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const [items, next] = await one(cursor);
    out.push(...items);
    if (next === undefined || seen.has(next)) break;
    seen.add(next);
    cursor = next;
  }
  return out;
}
