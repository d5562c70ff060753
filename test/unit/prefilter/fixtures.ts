import type { PrefilterTool } from '../../../src/prefilter/types.js';

/** Builds a tool with the boring fields filled in. */
export function tool(name: string, description: string, extra: Partial<PrefilterTool> = {}): PrefilterTool {
  return {
    name,
    providerName: name.replace(/\./g, '__'),
    description,
    tags: [],
    examples: [],
    params: [],
    ...extra,
  };
}

/** A small registry in the shape tools.d produces: English tools, two Chinese-only ones. */
export const REGISTRY: readonly PrefilterTool[] = [
  tool('weather.current', 'Current weather conditions for a city: temperature, wind and humidity.', {
    title: 'Current weather',
    tags: ['realtime_data', 'geo'],
    examples: ['weather in Paris right now', 'is it raining in London'],
    params: [{ name: 'city', description: 'City name' }],
  }),
  tool('weather.forecast', 'Weather forecast for the next seven days for a location.', {
    examples: ['will it rain tomorrow in Berlin'],
    params: [{ name: 'location' }, { name: 'days' }],
  }),
  tool('files.delete', 'Delete a file or folder from the shared drive. Destructive.', {
    params: [{ name: 'path', description: 'Path of the file to remove' }],
  }),
  tool('files.read', 'Read the contents of a text file from the shared drive.', {
    params: [{ name: 'path' }],
  }),
  tool('email.send', 'Send an email message to one or more recipients, with optional attachments.', {
    aliases: ['sendMail'],
    params: [{ name: 'to' }, { name: 'subject' }, { name: 'body' }],
  }),
  tool('calendar.create_event', 'Create an event in the user calendar with a title, start time and attendees.', {
    params: [{ name: 'title' }, { name: 'startTime' }, { name: 'attendees' }],
  }),
  tool('orders.status', 'Look up the status of a customer order by order number.', {
    params: [{ name: 'orderId', description: 'Order number' }],
  }),
  tool('translate.text', 'Translate text between languages.', {
    params: [{ name: 'text' }, { name: 'targetLanguage' }],
  }),
  tool('web.search', 'Search the web and return the top results with snippets.', {
    params: [{ name: 'query' }],
  }),
  tool('stocks.quote', 'Real-time stock price quote for a ticker symbol.', {
    params: [{ name: 'symbol' }],
  }),
  tool('math.calculate', 'Evaluate an arithmetic expression and return the number.', {
    aliases: ['calculator'],
  }),
  // Described only in Chinese.
  tool('kuaidi.track', '查询快递包裹的物流信息和配送进度。', {
    title: '快递查询',
    examples: ['我的快递到哪了'],
    params: [{ name: 'trackingNumber', description: '快递单号' }],
  }),
  tool('fx.convert', '按照实时汇率在不同货币之间换算金额，例如人民币兑美元。', {
    params: [{ name: 'amount', description: '金额' }],
  }),
];
