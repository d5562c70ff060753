/** What a promise made by `pending` settles through: the object that will settle it holds them. */
export interface Settle<T> {
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
}

let resolveOf: ((value: never) => void) | undefined;
let rejectOf: ((reason: unknown) => void) | undefined;

function capture(resolve: (value: never) => void, reject: (reason: unknown) => void): void {
  resolveOf = resolve;
  rejectOf = reject;
}

/**
 * A new promise whose settle functions are put on `holder`, with one executor for every promise
 * (`new Promise((resolve, reject) => …)` makes a closure and its context per call: this is for the
 * per-call path). The executor runs synchronously, so the two slots never hold another promise's.
 */
export function pending<T>(holder: Settle<T>): Promise<T> {
  const p = new Promise<T>(capture);
  holder.resolve = resolveOf as (value: T) => void;
  holder.reject = rejectOf as (reason: unknown) => void;
  resolveOf = rejectOf = undefined;
  return p;
}
