/** POSTs one JSON-RPC message to /mcp (fetch, no SDK) with the session's headers once there is a session. */
export type RawMcpPost = (body: unknown, headers?: Record<string, string>, signal?: AbortSignal) => Promise<Response>;

/**
 * A Streamable HTTP session on `${base}/mcp` opened by hand: initialize, then notifications/initialized
 * (answered 202). Throws when either step fails.
 */
export async function rawMcpSession(base: string, key: string): Promise<{ session: string; post: RawMcpPost }> {
  let session = '';
  const post: RawMcpPost = (body, headers = {}, signal) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${key}`,
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  session = init.headers.get('mcp-session-id') ?? '';
  await init.text();
  if (!session) throw new Error(`initialize answered ${init.status} without a session`);
  const ack = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await ack.text();
  if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
  return { session, post };
}
