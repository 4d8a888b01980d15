#!/usr/bin/env node
// Checks that text from the data never runs as markup. The site must have been built from data
// holding these strings (in case keys, error texts and other fields):
//
//   <script>window.__pwned=1</script>
//   <img src=x onerror="window.__pwned=1">
//
//   node dashboards/test/injection_test.mjs --site DIR [--screenshots OUTDIR] [--chromium PATH]
//
// It visits every view where a case key or an error text appears (overview, latest release with
// its regression list, case drill-down, case search results, coverage, breakdown) and checks that
// each hostile string the view's data holds shows as literal text (textContent) and that nothing
// ran: window.__pwned stays undefined, no dialog opens, no <img> element exists, no element has an
// onerror attribute, no <script> other than the page's own assets and data files exists, and the
// browser logs no error. Exit 1, one line per failed check.
import fs from 'node:fs';
import path from 'node:path';
import { check, checkPrerequisites, finish, firstLine, parseArgs, readData, runMain, setHash, short, withBrowser } from './common.mjs';

const NAME = 'injection_test';
const HOSTILE = ['<script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=1">'];
const MARK = '__pwned';
const TIMEOUT = 20000;
const USAGE = 'node dashboards/test/injection_test.mjs --site DIR [--screenshots OUTDIR] [--chromium PATH]';

// Every string in a value (deep) that holds the marker.
function hostileStrings(v, out = new Set()) {
  if (typeof v === 'string') { if (v.includes(MARK)) out.add(v); }
  else if (Array.isArray(v)) v.forEach((x) => hostileStrings(x, out));
  else if (v && typeof v === 'object') Object.values(v).forEach((x) => hostileStrings(x, out));
  return out;
}

async function main() {
  const o = parseArgs(process.argv.slice(2), {
    name: NAME, usage: USAGE, defaults: { screenshots: null },
    options: { '--screenshots': (o2, v) => { o2.screenshots = v; } },
  });
  const site = path.resolve(o.site);
  checkPrerequisites(site, o.chromium);
  if (o.screenshots) fs.mkdirSync(path.resolve(o.screenshots), { recursive: true });

  // What each view should show literally: the hostile strings of the fields it displays.
  const overview = readData(site, 'overview');
  const plan = [];  // {name, hash, view, expect: Set<string>, before(page)}
  let anyHostile = false;
  for (const g of overview.groups || []) {
    const gid = g.id;
    const ovShown = hostileStrings([overview.db, overview.gauntlet_version, overview.since,
      (overview.groups || []).map((x) => [x.backend, x.suite]),
      (g.releases || []).map((r) => [r.release, r.backend_version])]);
    const ovAll = hostileStrings(overview);
    if (ovAll.size) anyHostile = true;
    plan.push({ name: `${gid} overview`, hash: `#/${gid}/overview`, view: 'overview', expect: ovShown });

    if (g.latest) {
      const latest = readData(site, `${gid}/latest`);
      const lh = hostileStrings(latest);
      if (lh.size) anyHostile = true;
      // The regressions whose fields hold the marker, found with the key search box, and the
      // missing cases and new fallback ops (listed whole).
      const regs = (latest.regressions || []).filter((r) => hostileStrings(r).size);
      const regKeys = regs.filter((r) => String(r.key).includes(MARK));
      const expect = new Set();
      for (const r of regKeys.slice(0, 100)) {
        hostileStrings([r.key, r.detail, r.family, r.dtype, r.mode, r.status, r.change, r.gate, r.repro], expect);
      }
      hostileStrings([latest.missing, (latest.new_fallbacks || []).map((x) => x.op), latest.candidate, latest.baseline], expect);
      plan.push({ name: `${gid} latest (whole list)`, hash: `#/${gid}/latest`, view: 'latest', expect: hostileStrings([latest.missing, (latest.new_fallbacks || []).map((x) => x.op)]) });
      plan.push({ name: `${gid} latest (key search)`, hash: `#/${gid}/latest?q=${encodeURIComponent(MARK)}`, view: 'latest', expect, shot: 'injection_regressions.png' });
      // Regressions whose detail holds the marker but whose key does not: search by their key.
      for (const r of regs.filter((x) => !String(x.key).includes(MARK)).slice(0, 3)) {
        plan.push({ name: `${gid} latest (regression ${r.key})`, hash: `#/${gid}/latest?q=${encodeURIComponent(r.key)}`, view: 'latest', expect: hostileStrings([r.detail, r.family, r.status, r.repro]) });
      }
    }

    const index = readData(site, `${gid}/cases/index`);
    const ixKeys = (index.keys || []).filter((k) => k.includes(MARK));
    if (ixKeys.length || hostileStrings(index.families).size) anyHostile = true;
    plan.push({ name: `${gid} case search`, hash: `#/${gid}/cases?q=${encodeURIComponent(MARK)}`, view: 'cases', expect: new Set(ixKeys.slice(0, 100)), shot: 'injection_search.png' });

    // Case drill-downs: the hostile keys, and cases whose error texts hold the marker.
    const visit = new Map();
    ixKeys.slice(0, 10).forEach((k) => visit.set(k, null));
    const files = Math.max(g.case_files || 0, Math.ceil((index.keys || []).length / (index.per_file || 500)));
    for (let n = 0; n < files && visit.size < 20; n++) {
      let cf;
      try { cf = readData(site, `${gid}/cases/${n}`); } catch (e) { check(`${gid}/cases/${n}.js readable`, false, e.message); continue; }
      for (const c of cf.cases || []) {
        const hs = hostileStrings([c.key, c.error, c.status]);
        if (hs.size) { anyHostile = true; visit.set(c.key, c); }
      }
    }
    for (const [key] of visit) {
      let c = null;
      const i = index.keys.indexOf(key);
      if (i >= 0) c = (readData(site, `${gid}/cases/${Math.floor(i / index.per_file)}`).cases || []).find((x) => x.key === key);
      const fam = i >= 0 ? (index.families || [])[index.family[i]] : null;
      plan.push({ name: `${gid} case ${key}`, hash: `#/${gid}/case/${encodeURIComponent(key)}`, view: 'case',
        expect: hostileStrings([key, c ? c.error : [], c ? c.status : [], fam]), shot: plan.some((p) => p.view === 'case') ? null : 'injection_case.png' });
    }

    let cov = null, bd = null;
    try { cov = readData(site, `${gid}/coverage`); } catch (e) { check(`${gid}/coverage.js readable`, false, e.message); }
    try { bd = readData(site, `${gid}/breakdown`); } catch (e) { check(`${gid}/breakdown.js readable`, false, e.message); }
    if (cov) {
      const ch = hostileStrings([(cov.fallback_ops || []).slice(0, 100).map((x) => x.op), (cov.graph_breaks || []).slice(0, 100).map((x) => [x.target, (x.reasons || []).map((r) => r.reason), (x.guards || []).map((g) => g.guard)]), cov.releases]);
      if (hostileStrings(cov).size) anyHostile = true;
      plan.push({ name: `${gid} coverage`, hash: `#/${gid}/coverage`, view: 'coverage', expect: ch, shot: 'injection_coverage.png' });
    }
    if (bd) {
      const bh = hostileStrings([Object.keys((bd.by || {}).family || {}), Object.keys((bd.by || {}).dtype || {}), Object.keys((bd.by || {}).mode || {}), bd.releases]);
      if (bh.size) anyHostile = true;
      plan.push({ name: `${gid} breakdown`, hash: `#/${gid}/breakdown`, view: 'breakdown', expect: bh });
    }
  }
  if (!anyHostile) {
    console.log(`FAIL the data in ${site}/data holds no hostile string (no "${MARK}"): build the site from hostile data (sample_data.mjs --hostile)`);
    process.exit(1);
  }
  const allExpected = new Set();
  plan.forEach((p) => p.expect.forEach((s) => allExpected.add(s)));
  for (const hs of HOSTILE) {
    check(`the data shows "${hs}" somewhere`, [...allExpected].some((s) => s.includes(hs)), 'no displayed field holds it');
  }

  await withBrowser(site, o.chromium, async ({ base, context, foreign }) => {
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    const events = [];
    const dialogs = [];
    page.on('console', (m) => { if (m.type() === 'error') events.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => events.push(`page error: ${e.message}`));
    page.on('dialog', (d) => { dialogs.push(`${d.type()}: ${d.message()}`); d.dismiss().catch(() => {}); });
    page.on('response', (r) => { if (r.status() >= 400) events.push(`HTTP ${r.status()}: ${r.url()}`); });
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));

    await page.goto(base + 'index.html');
    await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: TIMEOUT });

    const shotsTaken = new Set();
    for (const p of plan) {
      const before = events.length;
      try {
        await setHash(page, p.hash);
        await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: TIMEOUT });
        const ready = await page.evaluate(() => document.body.dataset.ready);
        if (ready !== p.view) { check(`${p.name}: renders`, false, `the page shows "${ready}" instead`); continue; }
        // Give an injected handler (an <img onerror>) a moment to fire.
        await page.waitForTimeout(150);
        const state = await page.evaluate(() => ({
          pwned: typeof window.__pwned !== 'undefined',
          imgs: document.querySelectorAll('img').length,
          onerror: document.querySelectorAll('[onerror]').length,
          handlers: Array.from(document.querySelectorAll('*')).filter((e) => Array.from(e.attributes).some((a) => /^on/i.test(a.name))).length,
          scripts: Array.from(document.scripts).map((s) => s.getAttribute('src') || '(inline) ' + s.textContent.slice(0, 60))
            .filter((s) => !/^(assets\/[A-Za-z0-9_.-]+\.js|data\/[A-Za-z0-9_/-]+\.js)$/.test(s)),
          frames: document.querySelectorAll('iframe, object, embed, frame').length,
          text: document.body.textContent,
        }));
        check(`${p.name}: no script ran (window.__pwned undefined)`, !state.pwned);
        check(`${p.name}: no <img> element`, state.imgs === 0, `${state.imgs} found`);
        check(`${p.name}: no element with an onerror or other on* attribute`, state.onerror === 0 && state.handlers === 0, `${state.onerror} onerror, ${state.handlers} on*`);
        check(`${p.name}: only the page's own scripts`, state.scripts.length === 0 && state.frames === 0, state.scripts.join(' | '));
        for (const s of p.expect) {
          check(`${p.name}: shows ${JSON.stringify(s.length > 90 ? s.slice(0, 90) + '...' : s)} as text`, state.text.includes(s));
        }
        const ev = events.slice(before);
        check(`${p.name}: no console or page error`, ev.length === 0, ev.slice(0, 3).map(short).join(' | '));
        if (p.shot && o.screenshots && !shotsTaken.has(p.shot)) {
          shotsTaken.add(p.shot);
          await page.screenshot({ path: path.join(path.resolve(o.screenshots), p.shot), fullPage: false });
        }
      } catch (e) {
        check(`${p.name}`, false, firstLine(e));
      }
    }
    check('no dialog opened', dialogs.length === 0, dialogs.join(' | '));
    check('window.__pwned undefined at the end', !(await page.evaluate(() => typeof window.__pwned !== 'undefined')));
    const stray = requests.filter((u) => { try { const x = new URL(u); return x.pathname === '/x' || x.pathname.endsWith('/x'); } catch { return false; } });
    check('no request made by an injected <img>', stray.length === 0, stray.join(' '));
    check('no request left the loopback host', foreign.length === 0, foreign.slice(0, 5).join(' '));
  });
  finish(NAME);
}

runMain(NAME, main);
