// The benches' command-line options: `--name value`, with a default, checked to be positive.

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** `--name <positive integer>`, else `fallback`. */
export function integerOption(name: string, fallback: number): number {
  const value = option(name, fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

/** `--name <positive number>`, else `fallback`. */
export function numberOption(name: string, fallback: number): number {
  const value = option(name, fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}
