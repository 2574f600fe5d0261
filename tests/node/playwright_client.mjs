// Playwright for Node against bridge's DevTools endpoint, by HTTP URL with the token header:
// node playwright_client.mjs <http url> <token> <site url>. Prints one JSON line.
import { chromium } from 'playwright-core';

const [httpUrl, token, site] = process.argv.slice(2);
const browser = await chromium.connectOverCDP(httpUrl, {
  headers: { Authorization: `Bearer ${token}` },
  timeout: 60_000,
});
const page = await browser.contexts()[0].newPage();
await page.goto(`${site}/form`);
await page.fill('#name', 'Grace');
await page.click('#submit');
const out = await page.locator('#out').textContent();
await page.close();
await browser.close();
console.log(JSON.stringify({ out, contexts: 1 }));
