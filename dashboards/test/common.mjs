// Helpers shared by the dashboard's browser tests (browser_test.mjs, injection_test.mjs,
// load_time.mjs): command-line parsing, reading a data file's gauntletData payload, the static
// HTTP server on 127.0.0.1 (port 0), the loopback check, launching Debian's Chromium through
// playwright-core, the browser session with its watchdog, and the ok/FAIL check lines.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import vm from 'node:vm';
import { chromium } from 'playwright-core';

// ---------------------------------------------------------------------------------------------
// Arguments

// Parses argv. Every script takes --site DIR and --chromium PATH; spec.options maps each further
// option to a setter (o, value, usage) => void. usage(msg) prints `NAME: msg` and the usage line to
// stderr and exits 2, as does an unknown option, an option without its value, or a missing
// required one (spec.required: the keys of o, in the order they are checked; default ['site']).
export function parseArgs(argv, spec) {
  const usage = (msg) => {
    if (msg) console.error(`${spec.name}: ${msg}`);
    console.error(`usage: ${spec.usage}`);
    process.exit(2);
  };
  const setters = {
    '--site': (o, v) => { o.site = v; },
    '--chromium': (o, v) => { o.chromium = v; },
    ...spec.options,
  };
  const o = { site: null, chromium: process.env.CHROMIUM || '/usr/bin/chromium', ...spec.defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!Object.hasOwn(setters, a)) usage(`unknown argument ${a}`);
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    setters[a](o, argv[++i], usage);
  }
  for (const key of spec.required || ['site']) {
    if (!o[key]) usage(`--${key} is required`);
  }
  return o;
}

// Exits 1 with a FAIL line when the site is not assembled or Chromium is not there.
export function checkPrerequisites(site, chromiumPath) {
  if (!fs.existsSync(path.join(site, 'index.html'))) { console.log(`FAIL ${site}/index.html does not exist (assemble the site first)`); process.exit(1); }
  if (!fs.existsSync(chromiumPath)) { console.log(`FAIL no Chromium at ${chromiumPath} (install Debian's chromium: ci/setup.sh)`); process.exit(1); }
}

// ---------------------------------------------------------------------------------------------
// Data

// Reads data/<name>.js the way the page does: runs it with a gauntletData that keeps the payload.
export function readData(site, name) {
  const file = path.join(site, 'data', name + '.js');
  const src = fs.readFileSync(file, 'utf8');
  let payload;
  vm.runInNewContext(src, { gauntletData: (n, p) => { if (n === name) payload = p; } }, { filename: file, timeout: 20000 });
  if (payload === undefined) throw new Error(`${file} did not call gauntletData("${name}", ...)`);
  return JSON.parse(JSON.stringify(payload));
}

// ---------------------------------------------------------------------------------------------
// Server, browser

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};

// A static file server for root on 127.0.0.1, on a port the system picks (server.address().port).
export function startServer(root) {
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

export function closeServer(server) {
  return new Promise((resolve) => {
    if (!server) { resolve(); return; }
    if (server.closeAllConnections) server.closeAllConnections();
    server.close(() => resolve());
  });
}

export function isLoopback(u) {
  let url;
  try { url = new URL(u); } catch { return false; }
  if (['data:', 'blob:', 'about:', 'file:'].includes(url.protocol)) return true;
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

export function launchChromium(executablePath) {
  return chromium.launch({ executablePath, headless: true });
}

// Closes the browser (if any) and then the server (if any); never throws.
export async function closeAll(browser, server) {
  try { if (browser) await browser.close(); } catch { /* closing anyway */ }
  await closeServer(server);
}

// The first line of an error's message.
export const firstLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];

// Serves site, launches Chromium and runs body({ base, context, foreign }): base is the server's
// http://127.0.0.1:PORT/, context a browser context (1400x1000, no service workers) that aborts
// every request to a host other than loopback and lists it in foreign. An error thrown is a
// failed check 'test run'. Always closes the browser and the server; a run past 10 minutes fails
// and exits 1.
export async function withBrowser(site, chromiumPath, body) {
  let server = null, browser = null;
  const watchdog = setTimeout(async () => {
    console.log('FAIL the test did not finish within 10 minutes');
    await closeAll(browser, server);
    process.exit(1);
  }, 600000);
  watchdog.unref();

  try {
    server = await startServer(site);
    const base = `http://127.0.0.1:${server.address().port}/`;
    browser = await launchChromium(chromiumPath);
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
    const foreign = [];
    await context.route('**/*', (route) => {
      const u = route.request().url();
      if (!isLoopback(u)) { foreign.push(u); return route.abort('blockedbyclient'); }
      return route.fallback();
    });
    await body({ base, context, foreign });
  } catch (e) {
    check('test run', false, firstLine(e));
  } finally {
    await closeAll(browser, server);
    clearTimeout(watchdog);
  }
}

// Clears the page's readiness mark and goes to hash (firing hashchange again when already there).
export function setHash(page, hash) {
  return page.evaluate((h) => {
    document.body.removeAttribute('data-ready');
    if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = h;
  }, hash);
}

// ---------------------------------------------------------------------------------------------
// Checks

export const results = [];
export const short = (s) => (String(s).length > 200 ? String(s).slice(0, 200) + '...' : String(s));
export function check(name, ok, detail) {
  results.push({ name, ok: !!ok });
  if (ok) console.log(`ok   ${name}`);
  else console.log(`FAIL ${name}${detail !== undefined ? `: ${short(detail)}` : ''}`);
  return !!ok;
}

// Prints `NAME: P passed, F failed` and exits 1 when a check failed, else 0.
export function finish(name) {
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${name}: ${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

// Runs main; an error that escapes it is a FAIL line and exit 1.
export function runMain(name, main) {
  main().catch((e) => {
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    process.exit(1);
  });
}
