// Command-line flags of the benchmarks: `--name value`, with a default.
const argv = process.argv.slice(2);

/** The value after `name`, or `fallback`. */
export function flag(name, fallback) {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
}

/** True when the bare switch `name` is present. */
export function has(name) {
  return argv.includes(name);
}
