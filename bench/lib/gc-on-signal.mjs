// Preloaded into the gateway by bench/memory.mjs (node --expose-gc --import): on SIGUSR2, runs a full
// garbage collection and prints `MEM <process.memoryUsage() JSON>` on stderr. Changes nothing else.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  process.stderr.write(`MEM ${JSON.stringify(process.memoryUsage())}\n`);
});
