// What every driver shares: its job from argv[2] (JSON), its report on stdout (one JSON line).
//   job: { url, key, transport: 'http' | 'sse', calls: [{ name, arguments }], elicit?: 'accept' | 'decline' }
//   report: { tools: [names], results: [{ name, text, isError }], elicited: [messages] } or { error }
export const job = JSON.parse(process.argv[2] ?? '{}');

/** The text blocks of an MCP CallToolResult, joined by newlines. */
export const textOf = (r) => (r?.content ?? []).map((c) => c.text ?? '').join('\n');

/** The answer to an elicitation/create the job asked for (a form with one `approve` boolean). */
export const elicitAnswer = () => (job.elicit === 'accept' ? { action: 'accept', content: { approve: true } } : { action: 'decline' });

export function report(out) {
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** Runs the driver's body; reports an error as { error } (exit 0: the test judges it); ends the process (clients keep sockets open). */
export async function run(body) {
  const timer = setTimeout(() => {
    report({ error: 'driver timed out after 60 s' });
    process.exit(3);
  }, 60_000);
  try {
    report(await body());
  } catch (e) {
    report({ error: String(e?.stack ?? e?.message ?? e) });
  }
  clearTimeout(timer);
  process.exit(0);
}
