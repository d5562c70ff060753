/** The legacy transport's paths (MCP 2024-11-05 "HTTP with SSE"): the stream, and where its messages are posted. */
export const SSE_PATH = '/sse';
export const MESSAGES_PATH = '/messages';
