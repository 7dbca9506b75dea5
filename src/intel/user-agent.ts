// What the User-Agent header says: a declared bot or crawler (isbot's pattern list), the browser
// family, the device type, and how common the exact string is (user-agent-list.ts). Results are
// kept per string in a small cache: a handful of user agents make most traffic.
import { isbot } from 'isbot';
import type { UserAgentCommonness, UserAgentList } from './user-agent-list.js';

export interface UserAgentVerdict {
  /** bot: a declared bot or crawler; none: no User-Agent header. */
  readonly kind: 'browser' | 'bot' | 'other' | 'none';
  readonly browser: string | null;
  readonly device: 'desktop' | 'mobile' | 'tablet' | 'bot' | 'unknown';
}

const NONE: UserAgentVerdict = Object.freeze({ kind: 'none', browser: null, device: 'unknown' });
const CACHE_SIZE = 5000;
const cache = new Map<string, UserAgentVerdict>();

// Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'edge'], [/\b(OPR|Opera)\//, 'opera'], [/\bSamsungBrowser\//, 'samsung'], [/\b(Firefox|FxiOS)\//, 'firefox'],
  [/\b(Chrome|CriOS|Chromium)\//, 'chrome'], [/\bVersion\/[0-9.]+.*Safari\//, 'safari'],
];

export function classifyUserAgent(ua: string | undefined): UserAgentVerdict {
  if (ua === undefined || ua === '') return NONE;
  let v = cache.get(ua);
  if (v !== undefined) return v;
  v = classify(ua);
  if (cache.size >= CACHE_SIZE) cache.clear();
  cache.set(ua, v);
  return v;
}

function classify(ua: string): UserAgentVerdict {
  if (isbot(ua)) return Object.freeze({ kind: 'bot', browser: null, device: 'bot' });
  let browser: string | null = null;
  for (const [re, name] of BROWSERS) if (re.test(ua)) { browser = name; break; }
  const device = /\biPad\b|\bTablet\b|Android(?!.*\bMobile\b)/.test(ua) ? 'tablet'
    : /\bMobi|\biPhone\b|\biPod\b|Android.*\bMobile\b/.test(ua) ? 'mobile'
    : /\b(Windows NT|Macintosh|X11|CrOS)\b/.test(ua) ? 'desktop' : 'unknown';
  return Object.freeze({ kind: browser !== null && ua.startsWith('Mozilla/') ? 'browser' : 'other', browser, device });
}

export type { UserAgentCommonness, UserAgentList };
