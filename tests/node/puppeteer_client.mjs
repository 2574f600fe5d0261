// Puppeteer against bridge's DevTools endpoint: node puppeteer_client.mjs <ws url> <site url>
// Prints one JSON line of what it saw; any failure exits non-zero with the error on stderr.
import puppeteer from 'puppeteer-core';

const [wsUrl, site] = process.argv.slice(2);
const browser = await puppeteer.connect({ browserWSEndpoint: wsUrl, protocolTimeout: 60_000 });
const existing = (await browser.pages()).length;
const page = await browser.newPage();
await page.goto(`${site}/form`);
await page.type('#name', 'Ada');
await page.click('#submit');
await page.waitForFunction(() => document.getElementById('out').textContent !== '');
const out = await page.$eval('#out', (el) => el.textContent);
const shot = await page.screenshot({ encoding: 'base64' });
const session = await page.createCDPSession();
const { result } = await session.send('Runtime.evaluate', { expression: '6 * 7' });
const version = await browser.version();
await page.close();
await browser.disconnect();
console.log(JSON.stringify({ existing, out, shotChars: shot.length, cdp: result.value, version }));
