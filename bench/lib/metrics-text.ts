// Reading Prometheus text (GET /.metrics): the bench's stocked-pool measurement and the reliability
// tests (test/reliability/harness.ts) use this one parser.

/** Value of one sample line of a Prometheus text body (`name` or `name{labels}`), or null. */
export function metricValue(text: string, sample: string): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return null;
}
