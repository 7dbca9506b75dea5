// Headless Chromium for the end-to-end tests: Debian's /usr/bin/chromium driven by playwright-core,
// with the flags that keep it off the network, and the loopback site that serves a test's pages.
import type { Server } from 'node:http';
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
