// Headless Chromium for the end-to-end tests: Debian's /usr/bin/chromium driven by playwright-core,
// with the flags that keep it off the network, and the loopback site that serves a test's pages.
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Without them Chromium's own connections are refused, many at a time, by this closed network. */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
]);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}

/** Starts `site` on a free loopback port; its origin as the browser will name it (http://localhost:PORT). */
export async function listenSite(site: Server): Promise<string> {
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return `http://localhost:${(site.address() as { port: number }).port}`;
}

export function closeSite(site: Server | undefined): Promise<void> {
  return new Promise((resolve) => (site ? site.close(() => resolve()) : resolve()));
}

/** A page the loopback site serves at its path. */
export interface SitePage {
  readonly type: string;
  readonly body: string | Buffer;
}

/** A site serving `pages` by exact path (404 for the rest). */
export function pagesSite(pages: Readonly<Record<string, SitePage>>): Server {
  return createServer((req, res) => {
    const p = pages[req.url ?? ''];
    if (!p) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': p.type }).end(p.body);
  });
}
