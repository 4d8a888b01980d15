#!/usr/bin/env node
// Measures how long the overview and the status grid take to become interactive in headless
// Chromium: from navigation start to the page's `overview-ready` / `grid-ready` performance mark
// (set once the view is drawn and takes input, when document.body.dataset.ready becomes its
// name). The grid's figure is also given as a ratio against the overview's, measured in the same
// run, and with the time a status filter takes over every case (the change event to the next
// frame). Each run is a fresh browser context (empty cache), over a loopback HTTP server and then
// over file://.
//
//   node dashboards/test/load_time.mjs --site DIR [--runs 5] [--max-ms 2000] [--chromium PATH]
//
// Prints the median and every run, in ms. Exit 1 when a run does not render its view, logs a
// browser error, or when a median is above --max-ms.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkPrerequisites, closeAll, firstLine, launchChromium, parseArgs, readData, startServer } from './common.mjs';

const NAME = 'load_time';
const USAGE = 'node dashboards/test/load_time.mjs --site DIR [--runs 5] [--max-ms 2000] [--chromium PATH]';
const OPTIONS = {
  '--runs': (o, v, usage) => { o.runs = Number(v); if (!Number.isInteger(o.runs) || o.runs < 1) usage('--runs takes a positive integer'); },
  '--max-ms': (o, v, usage) => { o.maxMs = Number(v); if (!(o.maxMs > 0)) usage('--max-ms takes a positive number'); },
};

const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

async function measure(browser, url, runs, view) {
  const times = [];
  const filters = [];
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
      await page.waitForFunction((v) => document.body.dataset.ready === v || document.body.dataset.ready === 'error', view, { timeout: 60000 });
      const r = await page.evaluate((v) => {
        const m = performance.getEntriesByName(v + '-ready')[0];
        const grid = document.querySelector('[data-testid=grid]');
        return { ready: document.body.dataset.ready, t: m ? m.startTime : null,
          rows: document.querySelectorAll('[data-testid=release-row]').length,
          points: document.querySelector('[data-testid=chart-pass_rate]') ? document.querySelector('[data-testid=chart-pass_rate]').getAttribute('data-points') : null,
          gridRows: grid ? grid.getAttribute('data-rows') : null, drawn: grid ? grid.getAttribute('data-drawn') : null,
          columns: document.querySelectorAll('[data-testid=grid-release]').length };
      }, view);
      if (r.ready !== view || r.t === null) problems.push(`run ${i + 1}: the ${view} did not render (${r.ready})`);
      else {
        times.push(r.t);
        if (i === 0 && view === 'overview') console.log(`  (${r.rows} release rows, ${r.points} points on the pass-rate chart)`);
        if (i === 0 && view === 'grid') console.log(`  (${r.gridRows} cases x ${r.columns} releases, ${r.drawn} rows drawn)`);
      }
      if (view === 'grid' && r.ready === view) {
        // A filter over every case: the change event, the filter, the rows drawn, the next frame.
        const f = await page.evaluate(() => new Promise((resolve) => {
          const sel = document.querySelector('[data-testid=grid-status]');
          const opt = Array.from(sel.options).map((o) => o.value).find((v) => v === 'FAIL') || sel.options[sel.options.length - 1].value;
          const t0 = performance.now();
          sel.value = opt;
          sel.dispatchEvent(new Event('change'));
          requestAnimationFrame(() => resolve({ ms: performance.now() - t0, count: document.querySelector('[data-testid=grid-count]').getAttribute('data-count'), status: opt }));
        }));
        filters.push(f.ms);
        if (i === 0) console.log(`  (filter status=${f.status}: ${f.count} cases)`);
      }
    } catch (e) {
      problems.push(`run ${i + 1}: ${String(e.message || e).split('\n')[0]}`);
    } finally {
      await context.close();
    }
  }
  return { times, filters, problems };
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
    const gid = (readData(site, 'overview').groups || []).map((g) => g.id)[0];
    const hasGrid = gid && fs.existsSync(path.join(site, 'data', gid, 'grid.js'));
    const targets = [
      ['http', `http://127.0.0.1:${server.address().port}/index.html`],
      ['file', pathToFileURL(path.join(site, 'index.html')).href],
    ];
    for (const [label, url] of targets) {
      const medians = {};
      for (const view of hasGrid ? ['overview', 'grid'] : ['overview']) {
        const { times, filters, problems } = await measure(browser, view === 'overview' ? url : `${url}#/${encodeURIComponent(gid)}/grid`, o.runs, view);
        problems.forEach((p) => { console.log(`FAIL ${label} ${view}: ${p}`); failed++; });
        if (!times.length) continue;
        const med = median(times);
        medians[view] = med;
        console.log(`${label} ${view}: median ${med.toFixed(1)} ms; runs ${times.map((t) => t.toFixed(1)).join(', ')} ms`);
        if (filters.length) console.log(`${label} grid filter: median ${median(filters).toFixed(1)} ms; runs ${filters.map((t) => t.toFixed(1)).join(', ')} ms`);
        if (med > o.maxMs) { console.log(`FAIL ${label} ${view}: median ${med.toFixed(1)} ms is above ${o.maxMs} ms`); failed++; }
      }
      if (medians.overview && medians.grid) console.log(`${label}: grid / overview = ${(medians.grid / medians.overview).toFixed(2)}`);
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
