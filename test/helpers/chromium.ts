import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`.ci/run` installs it); playwright-core downloads no browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile; missing Chromium fails the test (never skipped). */
export async function launchChromium(opts: { extraArgs?: string[]; viewport?: { width: number; height: number } } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: this test needs Chromium (apt-get install chromium). It is not skipped on purpose.`);
  const userDataDir = mkdtempSync(join(tmpdir(), 'toolgate-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, ...(opts.extraArgs ?? [])],
    ...(opts.viewport ? { viewport: opts.viewport } : {}),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** A new page on the console at `base`, signed in with an API key; page errors go to `errors`. */
export async function openConsole(browser: Browser, base: string, key: string, errors: string[]): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/console`);
  await page.fill('#key', key);
  await page.click('#connect');
  return page;
}
