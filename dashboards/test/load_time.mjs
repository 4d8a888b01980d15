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
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const NAME = 'load_time';

function usage(msg) {
  if (msg) console.error(`${NAME}: ${msg}`);
  console.error('usage: node dashboards/test/load_time.mjs --site DIR [--runs 5] [--max-ms 2000] [--chromium PATH]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { site: null, runs: 5, maxMs: 2000, chromium: process.env.CHROMIUM || '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { if (i + 1 >= argv.length) usage(`${a} needs a value`); return argv[++i]; };
    if (a === '--site') o.site = val();
    else if (a === '--runs') { o.runs = Number(val()); if (!Number.isInteger(o.runs) || o.runs < 1) usage('--runs takes a positive integer'); }
    else if (a === '--max-ms') { o.maxMs = Number(val()); if (!(o.maxMs > 0)) usage('--max-ms takes a positive number'); }
    else if (a === '--chromium') o.chromium = val();
    else usage(`unknown argument ${a}`);
  }
  if (!o.site) usage('--site is required');
  return o;
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

function startServer(root) {
  const server = http.createServer((req, res) => {
    let rel;
    try { rel = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname); } catch { res.writeHead(400); res.end(); return; }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.resolve(root, '.' + path.posix.normalize(rel));
    if (file !== root && !file.startsWith(root + path.sep)) { res.writeHead(403); res.end(); return; }
    fs.readFile(file, (err, buf) => {
      if (err) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not found'); return; }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(buf);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function closeServer(server) {
  return new Promise((resolve) => {
    if (!server) { resolve(); return; }
    if (server.closeAllConnections) server.closeAllConnections();
    server.close(() => resolve());
  });
}

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
  const o = parseArgs(process.argv.slice(2));
  const site = path.resolve(o.site);
  if (!fs.existsSync(path.join(site, 'index.html'))) { console.log(`FAIL ${site}/index.html does not exist (assemble the site first)`); process.exit(1); }
  if (!fs.existsSync(o.chromium)) { console.log(`FAIL no Chromium at ${o.chromium} (install Debian's chromium: ci/setup.sh)`); process.exit(1); }
  const ovSize = fs.statSync(path.join(site, 'data', 'overview.js')).size;
  console.log(`${NAME}: ${site} (data/overview.js ${(ovSize / 1024).toFixed(1)} KiB), ${o.runs} runs each, fresh context per run`);

  let server = null, browser = null;
  let failed = 0;
  try {
    server = await startServer(site);
    browser = await chromium.launch({ executablePath: o.chromium, headless: true });
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
    console.log(`FAIL ${NAME}: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
    failed++;
  } finally {
    try { if (browser) await browser.close(); } catch { /* closing anyway */ }
    await closeServer(server);
  }
  process.exit(failed ? 1 : 0);
}

main();
