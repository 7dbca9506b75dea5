// Reading Prometheus text (GET /.metrics): the bench's stocked-pool measurement and the reliability
// tests (test/reliability/harness.ts) use this one parser.

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function split(sample: string): { name: string; labels: Map<string, string> } {
  const brace = sample.indexOf('{');
  if (brace < 0) return { name: sample, labels: new Map() };
  const labels = new Map<string, string>();
  for (const m of sample.slice(brace + 1, sample.lastIndexOf('}')).matchAll(LABEL)) labels.set(m[1]!, m[2]!);
  return { name: sample.slice(0, brace), labels };
}

/**
 * Value of one sample of a Prometheus text body, or null. `sample` is `name` or `name{labels}`; a
 * line matches when its name is the same and it carries every label given with the same value
 * (labels every series has, such as node and node_name, need not be named).
 */
export function metricValue(text: string, sample: string): number | null {
  const want = split(sample);
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.lastIndexOf(' ');
    const have = split(line.slice(0, space));
    if (have.name !== want.name) continue;
    if ([...want.labels].every(([k, v]) => have.labels.get(k) === v)) return Number(line.slice(space + 1));
  }
  return null;
}
