// Host patterns with wildcards, for ALLOWED_HOSTS, CORS_ORIGINS and API-key hostnames:
// `example.com` matches itself; `*.example.com` matches any sub-domain (not the apex); `*` matches all.

export type HostMatcher = (host: string) => boolean;

export function hostMatcher(patterns: readonly string[]): HostMatcher {
  if (patterns.length === 0 || patterns.includes('*')) return () => true;
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const p of patterns) {
    const lower = p.trim().toLowerCase();
    if (lower.startsWith('*.')) suffixes.push(lower.slice(1));
    else exact.add(lower);
  }
  return (host) => {
    const h = host.toLowerCase();
    if (exact.has(h)) return true;
    for (const s of suffixes) if (h.length > s.length && h.endsWith(s)) return true;
    return false;
  };
}

/** The host of a Host header (port and IPv6 brackets removed), lower-case. */
export function hostOfHeader(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end < 0 ? v : v.slice(1, end);
  }
  const colon = v.indexOf(':');
  return colon < 0 ? v : v.slice(0, colon);
}

/** Origin patterns (`https://example.com`, `https://*.example.com`, or bare hosts) → matcher of Origin values. */
export function originMatcher(patterns: readonly string[]): (origin: string) => boolean {
  if (patterns.length === 0 || patterns.includes('*')) return () => true;
  const exact = new Set<string>();
  const wild: { scheme: string; suffix: string }[] = [];
  for (const p of patterns) {
    const lower = p.trim().toLowerCase().replace(/\/+$/, '');
    const m = /^([a-z][a-z0-9+.-]*:\/\/)?\*(\..+)$/.exec(lower);
    if (m) wild.push({ scheme: m[1] ?? '', suffix: m[2]! });
    else exact.add(lower);
  }
  return (origin) => {
    const o = origin.toLowerCase();
    if (exact.has(o)) return true;
    const host = o.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
    if (exact.has(host)) return true;
    for (const w of wild) {
      if (w.scheme !== '' && !o.startsWith(w.scheme)) continue;
      const hostPart = hostOfHeader(host);
      if (hostPart.length > w.suffix.length && hostPart.endsWith(w.suffix)) return true;
    }
    return false;
  };
}
