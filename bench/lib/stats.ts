// The statistics the report uses: medians over repeated runs, ratios rounded for display.

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** a / b to two decimals; null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return Math.round((a / b) * 100) / 100;
}

export function round(x: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * The Theil–Sen line through (t, y) points: slope = the median of the slopes between every pair of
 * points with different t, intercept = the median of y − slope·t. Unlike least squares, a few points
 * far off the line (a heap shrunk by one collection, a sample taken mid-collection) do not tilt it:
 * up to ~29% of the points can be anywhere. null with fewer than two distinct t.
 */
export function theilSen(points: readonly (readonly [number, number])[]): { slope: number; intercept: number } | null {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const [ti, yi] = points[i]!;
      const [tj, yj] = points[j]!;
      if (ti !== tj) slopes.push((yj - yi) / (tj - ti));
    }
  }
  if (slopes.length === 0) return null;
  const slope = median(slopes);
  return { slope, intercept: median(points.map(([t, y]) => y - slope * t)) };
}
