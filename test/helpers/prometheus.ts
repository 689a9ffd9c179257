/** Reading the Prometheus text exposition in tests (`/metrics` answers). */

/** The value of one sample of the exposition: `name` with exactly `labels`; undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    const want = Object.entries(labels);
    if (want.length === Object.keys(got).length && want.every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}
