/** Polls a condition that an event outside the test's reach will make true (bounded: 2.5 s). */
export async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error(`${what} not reached`);
}

/** Polls an asynchronous condition (a request, a store read) every 20 ms, bounded by `timeoutMs`. */
export async function untilAsync(cond: () => Promise<boolean>, what = 'condition', timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms`);
}
