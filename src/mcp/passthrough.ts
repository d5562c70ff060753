import type { Client } from '@modelcontextprotocol/client';
import { allPages } from './pages.js';

/**
 * What an upstream server says on its own that /mcp passes on to its clients (resources,
 * prompts, logging): the pool relays these notifications as `passthrough` events; the gateway's
 * MCP face (src/mcp-server/hub.ts) decides which downstream sessions hear them.
 */
export type PassthroughNotification =
  | { method: 'notifications/resources/updated'; params: { uri: string } }
  | { method: 'notifications/resources/list_changed' }
  | { method: 'notifications/prompts/list_changed' }
  | { method: 'notifications/message'; params: { level: string; logger?: string; data: unknown } };

export interface PassthroughEvent {
  server: string;
  notification: PassthroughNotification;
}

/**
 * Registers the client's handlers for the passthrough notifications. In 2025 the server sends
 * them unsolicited; in 2026-07-28 they come on the session's `subscriptions/listen` stream
 * (LISTEN_FILTER), dispatched to the same handlers by the SDK.
 */
export function relayPassthrough(client: Client, server: string, emit: ((e: PassthroughEvent) => void) | undefined): void {
  if (!emit) return;
  client.setNotificationHandler('notifications/resources/updated', (n) => emit({ server, notification: { method: 'notifications/resources/updated', params: { uri: n.params.uri } } }));
  client.setNotificationHandler('notifications/resources/list_changed', () => emit({ server, notification: { method: 'notifications/resources/list_changed' } }));
  client.setNotificationHandler('notifications/prompts/list_changed', () => emit({ server, notification: { method: 'notifications/prompts/list_changed' } }));
  client.setNotificationHandler('notifications/message', (n) => {
    const { level, logger, data } = n.params;
    emit({ server, notification: { method: 'notifications/message', params: { level, data, ...(logger !== undefined ? { logger } : {}) } } });
  });
}

/**
 * The 2026-07-28 listen filter of an upstream session: the list changes it has capabilities for
 * (a server that lacks one would refuse or ignore it), and the URIs the gateway subscribed to.
 */
export function listenFilter(client: Client, resourceSubscriptions: readonly string[] = []): {
  toolsListChanged: true; resourcesListChanged?: true; promptsListChanged?: true; resourceSubscriptions?: string[];
} {
  const caps = client.getServerCapabilities();
  return {
    toolsListChanged: true,
    ...(caps?.resources?.listChanged ? { resourcesListChanged: true as const } : {}),
    ...(caps?.prompts?.listChanged ? { promptsListChanged: true as const } : {}),
    ...(caps?.resources?.subscribe && resourceSubscriptions.length > 0 ? { resourceSubscriptions: [...resourceSubscriptions] } : {}),
  };
}

/** What a server without prefix gives through /mcp under its own names: checked for clashes at import (import.ts). */
export interface PassthroughNames {
  resources: string[];
  templates: string[];
  prompts: string[];
}

/** The server's resource URIs, templates and prompt names (what its capabilities offer; a list that fails is empty). */
export async function listPassthroughNames(client: Client, timeout: number): Promise<PassthroughNames> {
  const caps = client.getServerCapabilities();
  const opts = { timeout, cacheMode: 'bypass' as const };
  const at = (cursor: string | undefined) => (cursor === undefined ? {} : { cursor });
  const [resources, templates, prompts] = await Promise.all([
    caps?.resources ? allPages((c) => client.listResources(at(c), opts).then((r) => [r.resources.map((x) => x.uri), r.nextCursor])).catch(() => []) : [],
    caps?.resources ? allPages((c) => client.listResourceTemplates(at(c), opts).then((r) => [r.resourceTemplates.map((x) => x.uriTemplate), r.nextCursor])).catch(() => []) : [],
    caps?.prompts ? allPages((c) => client.listPrompts(at(c), opts).then((r) => [r.prompts.map((x) => x.name), r.nextCursor])).catch(() => []) : [],
  ]);
  return { resources, templates, prompts };
}
