/**
 * Quality gates run before a release is published. Pure: they compare this build's per-source
 * counts with the previous release's manifest and return messages that name the source and
 * the numbers. Any failure blocks the publish unless the operator passes --force.
 */
export interface SourceCounts {
  lines: number;
  rows: number;
  rejects: number;
  reasons: Record<string, number>;
}

export interface GateLimits {
  maxShrinkRatio: number;
  maxRejectRatio: number;
}

export interface GateResult {
  passed: boolean;
  messages: string[];
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const int = (x: number): string => x.toLocaleString('en-IE');

/**
 * Check each source: rejects over `maxRejectRatio` of its lines, or published rows shrinking by
 * more than `maxShrinkRatio` against the previous release, fail the gate. A source with no
 * previous count (first release, new source) is only checked for rejects. A source that
 * produced nothing at all fails.
 */
export function checkGates(
  current: Record<string, SourceCounts>,
  previous: Record<string, SourceCounts> | null,
  limits: GateLimits,
): GateResult {
  const messages: string[] = [];
  for (const [source, c] of Object.entries(current)) {
    if (c.rows === 0) {
      messages.push(`source '${source}' produced no rows (${int(c.lines)} lines read, ${int(c.rejects)} rejected)`);
      continue;
    }
    const rejectRatio = c.lines > 0 ? c.rejects / c.lines : 0;
    if (rejectRatio > limits.maxRejectRatio) {
      const top = Object.entries(c.reasons)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([r, n]) => `${r} ${int(n)}`)
        .join(', ');
      messages.push(
        `source '${source}' rejected ${pct(rejectRatio)} of its lines (${int(c.rejects)} of ${int(c.lines)}; limit ${pct(limits.maxRejectRatio)}; ${top})`,
      );
    }
    const before = previous?.[source]?.rows;
    if (before && before > 0) {
      const shrink = (before - c.rows) / before;
      if (shrink > limits.maxShrinkRatio) {
        messages.push(
          `source '${source}' shrank ${pct(shrink)} against the last release (${int(c.rows)} rows now, ${int(before)} before; limit ${pct(limits.maxShrinkRatio)})`,
        );
      }
    }
  }
  if (previous) {
    for (const source of Object.keys(previous)) {
      if (!(source in current))
        messages.push(`source '${source}' is missing from this build (it had ${int(previous[source]!.rows)} rows)`);
    }
  }
  return { passed: messages.length === 0, messages };
}
