/** Small pieces shared by the gateway's bounded fetches (issuers' endpoints, OpenAPI documents). */

/** A fetch response's body as UTF-8, or undefined once it passes `maxBytes` (reading stops there). */
export async function readCapped(res: Response, maxBytes: number): Promise<string | undefined> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Why a fetch failed, in a word where there is one (ECONNREFUSED…): never the URL or a header. */
export function fetchCause(e: unknown): string {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
}
