#!/usr/bin/env node
// Measures how long the overview takes to render in headless Chromium: from navigation start to
// the page's `overview-ready` performance mark (set once the overview's charts and table are
// drawn, when document.body.dataset.ready becomes "overview"). Each run is a fresh browser
// context (empty cache), over a loopback HTTP server and then over file://.
//
//   node dashboards/test/load_time.mjs --site DIR [--runs 5] [--max-ms 2000] [--chromium PATH]
//
// Prints the median and every run, in ms. Exit 1 when a run does not render the overview, logs
// a browser error, or when a median is above --max-ms.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkPrerequisites, closeAll, firstLine, launchChromium, parseArgs, startServer } from './common.mjs';

const NAME = 'load_time';
const USAGE = 'node dashboards/test/load_time.mjs --site DIR [--runs 5] [--max-ms 2000] [--chromium PATH]';
const OPTIONS = {
  '--runs': (o, v, usage) => { o.runs = Number(v); if (!Number.isInteger(o.runs) || o.runs < 1) usage('--runs takes a positive integer'); },
  '--max-ms': (o, v, usage) => { o.maxMs = Number(v); if (!(o.maxMs > 0)) usage('--max-ms takes a positive number'); },
};

const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

async function measure(browser, url, runs) {
  const times = [];
  const problems = [];
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await context.route(/^(https?|wss?):/, (route) => {
      const host = new URL(route.request().url()).hostname;
      if (['127.0.0.1', 'localhost', '[::1]'].includes(host)) return route.fallback();
      problems.push(`request to ${route.request().url()}`);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    try {
      await page.goto(url);
      await page.waitForFunction(() => document.body.dataset.ready === 'overview' || document.body.dataset.ready === 'error', null, { timeout: 30000 });
      const r = await page.evaluate(() => {
        const m = performance.getEntriesByName('overview-ready')[0];
        return { ready: document.body.dataset.ready, t: m ? m.startTime : null,
          rows: document.querySelectorAll('[data-testid=release-row]').length,
          points: document.querySelector('[data-testid=chart-pass_rate]') ? document.querySelector('[data-testid=chart-pass_rate]').getAttribute('data-points') : null };
      });
      if (r.ready !== 'overview' || r.t === null) problems.push(`run ${i + 1}: the overview did not render (${r.ready})`);
      else { times.push(r.t); if (i === 0) console.log(`  (${r.rows} release rows, ${r.points} points on the pass-rate chart)`); }
    } catch (e) {
      problems.push(`run ${i + 1}: ${String(e.message || e).split('\n')[0]}`);
    } finally {
      await context.close();
    }
  }
  return { times, problems };
}

async function main() {
  const o = parseArgs(process.argv.slice(2), { name: NAME, usage: USAGE, options: OPTIONS, defaults: { runs: 5, maxMs: 2000 } });
  const site = path.resolve(o.site);
  checkPrerequisites(site, o.chromium);
  const ovSize = fs.statSync(path.join(site, 'data', 'overview.js')).size;
  console.log(`${NAME}: ${site} (data/overview.js ${(ovSize / 1024).toFixed(1)} KiB), ${o.runs} runs each, fresh context per run`);

  let server = null, browser = null;
  let failed = 0;
  try {
    server = await startServer(site);
    browser = await launchChromium(o.chromium);
    const targets = [
      ['http', `http://127.0.0.1:${server.address().port}/index.html`],
      ['file', pathToFileURL(path.join(site, 'index.html')).href],
    ];
    for (const [label, url] of targets) {
      const { times, problems } = await measure(browser, url, o.runs);
      problems.forEach((p) => { console.log(`FAIL ${label}: ${p}`); failed++; });
      if (times.length) {
        const med = median(times);
        console.log(`${label}: median ${med.toFixed(1)} ms; runs ${times.map((t) => t.toFixed(1)).join(', ')} ms`);
        if (med > o.maxMs) { console.log(`FAIL ${label}: median ${med.toFixed(1)} ms is above ${o.maxMs} ms`); failed++; }
      }
    }
  } catch (e) {
    console.log(`FAIL ${NAME}: ${firstLine(e)}`);
    failed++;
  } finally {
    await closeAll(browser, server);
  }
  process.exit(failed ? 1 : 0);
}

main();
