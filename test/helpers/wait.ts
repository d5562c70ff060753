/** Polls a condition that an event outside the test's reach will make true (bounded: 2.5 s). */
export async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error(`${what} not reached`);
}
