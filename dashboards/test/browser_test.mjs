#!/usr/bin/env node
// Drives the dashboard in Debian's headless Chromium (playwright-core) over a loopback HTTP
// server and checks what each view shows against the site's own data files.
//
//   node dashboards/test/browser_test.mjs --site DIR --screenshots OUTDIR
//        [--expect-releases N] [--expect-group BACKEND/SUITE] [--chromium /usr/bin/chromium]
//
// Fails (exit 1, one line per failed check) on a failed check, on any console error or page error
// in the browser, on any failed or refused request, and on any request to a host other than
// loopback. Always closes the browser and the server.
import fs from 'node:fs';
import path from 'node:path';
import { check, checkPrerequisites, finish, firstLine, isLoopback, parseArgs, readData, runMain, setHash, short, withBrowser } from './common.mjs';

const NAME = 'browser_test';
const PAGE_SIZE = 100;
const TIMEOUT = 20000;

// ---------------------------------------------------------------------------------------------
// Arguments, checks

const USAGE = 'node dashboards/test/browser_test.mjs --site DIR --screenshots OUTDIR [--expect-releases N] [--expect-group BACKEND/SUITE] [--chromium PATH]';
const OPTIONS = {
  '--screenshots': (o, v) => { o.screenshots = v; },
  '--expect-releases': (o, v, usage) => {
    o.expectReleases = Number(v);
    if (!Number.isInteger(o.expectReleases) || o.expectReleases < 0) usage('--expect-releases takes a whole number');
  },
  '--expect-group': (o, v) => { o.expectGroup = v; },
};

function checkEq(name, got, want) {
  return check(name, got === want, `got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
}

async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(name, false, firstLine(e));
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const o = parseArgs(process.argv.slice(2), {
    name: NAME, usage: USAGE, options: OPTIONS,
    defaults: { screenshots: null, expectReleases: null, expectGroup: null }, required: ['site', 'screenshots'],
  });
  const site = path.resolve(o.site);
  const shots = path.resolve(o.screenshots);
  checkPrerequisites(site, o.chromium);
  fs.mkdirSync(shots, { recursive: true });

  const overview = readData(site, 'overview');
  const groups = overview.groups || [];
  let g = groups[0];
  if (o.expectGroup) {
    g = groups.find((x) => `${x.backend}/${x.suite}` === o.expectGroup);
    if (!g) { console.log(`FAIL no group ${o.expectGroup} in ${site}/data/overview.js (it has ${groups.map((x) => `${x.backend}/${x.suite}`).join(', ') || 'none'})`); process.exit(1); }
  }
  if (!g) { console.log(`FAIL ${site}/data/overview.js has no groups`); process.exit(1); }
  const N = o.expectReleases !== null ? o.expectReleases : g.releases.length;
  const gid = g.id;
  console.log(`${NAME}: group ${g.backend}/${g.suite} (${gid}), ${N} releases expected, site ${site}`);

  await withBrowser(site, o.chromium, async ({ base, context, foreign }) => {
    let errors = [];
    let expectErrors = false;
    const watch = (page) => {
      page.on('console', (m) => { if (m.type() === 'error' && !expectErrors) errors.push(`console error: ${m.text()}`); });
      page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
      page.on('dialog', (d) => { errors.push(`dialog: ${d.type()} ${d.message()}`); d.dismiss().catch(() => {}); });
      page.on('requestfailed', (r) => { if (isLoopback(r.url()) && !expectErrors) errors.push(`request failed: ${r.url()} (${r.failure() && r.failure().errorText})`); });
      page.on('response', (r) => { if (r.status() >= 400 && !expectErrors) errors.push(`HTTP ${r.status()}: ${r.url()}`); });
    };
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    watch(page);

    const ready = (view) => page.waitForFunction((v) => document.body.dataset.ready === v || document.body.dataset.ready === 'error', view, { timeout: TIMEOUT })
      .then(async () => {
        const got = await page.evaluate(() => document.body.dataset.ready);
        if (got !== view) {
          const msg = await page.evaluate(() => { const e = document.querySelector('[data-testid=load-error], .error'); return e ? e.textContent : ''; });
          throw new Error(`the ${view} view showed an error: ${msg}`);
        }
      });
    const go = async (hash, view) => {
      await setHash(page, hash);
      await ready(view);
    };
    const clickTo = async (locator, view) => {
      await page.evaluate(() => document.body.removeAttribute('data-ready'));
      await locator.click();
      await ready(view);
    };
    const count = (sel) => page.locator(sel).count();
    const attr = (sel, a) => page.locator(sel).first().getAttribute(a);
    const text = (sel) => page.locator(sel).first().textContent();
    const waitCount = async (sel, want) => {
      await page.waitForFunction(([s, w]) => { const e = document.querySelector(s); return e && e.getAttribute('data-count') === String(w); }, [sel, want], { timeout: 5000 }).catch(() => {});
      return Number(await attr(sel, 'data-count'));
    };

    // Charts whose canvas sticks out of their figure (drawn at a wrong width).
    const chartsOverflowing = () => page.evaluate(() => Array.from(document.querySelectorAll('figure.chart')).filter((f) => {
      if (f.querySelector('[data-testid=errors-none]')) return false;  // says why there is no chart
      const c = f.querySelector('canvas');
      if (!c) return true;
      const a = f.getBoundingClientRect(), b = c.getBoundingClientRect();
      return b.width < 50 || b.left < a.left - 1 || b.right > a.right + 1;
    }).map((f) => f.getAttribute('data-testid')).join(' '));

    // ---------------------------------------------------------------- overview
    const nonNull = (rows, f) => rows.filter((r) => typeof r[f] === 'number').length;
    const n0 = (i) => g.releases.length - 1 - i;  // release i's row in the table, newest first
    await step('overview renders', async () => {
      await page.goto(base + 'index.html#/' + encodeURIComponent(gid) + '/overview');
      await ready('overview');
      check('overview renders', true);
    });
    await step('overview counts', async () => {
      checkEq('overview: release count shown', (await text('[data-testid=release-count]')).trim(), String(N));
      checkEq('overview: rows in the releases table', await count('[data-testid=release-row]'), N);
      // The pass rate of the cases that ran, and the share that ran: two points a release.
      checkEq('overview: points on the pass_rate chart', Number(await attr('[data-testid=chart-pass_rate]', 'data-points')), nonNull(g.releases, 'pass_rate_ran') + nonNull(g.releases, 'ran_share'));
      check('overview: every release has its pass rate of the cases that ran', nonNull(g.releases, 'pass_rate_ran') === N && nonNull(g.releases, 'ran_share') === N);
      const last = g.releases[g.releases.length - 1];
      checkEq('overview: the pass rate shown is of the cases that ran', (await text('[data-testid=kpi-pass-rate]')).trim(), `${(100 * last.pass_rate_ran).toFixed(2)}%`);
      checkEq('overview: unmeasured graph breaks say so', await count('[data-testid=chart-graph_breaks] [data-testid=not-measured]'), nonNull(g.releases, 'graph_breaks') < N ? 1 : 0);
      for (const id of ['fallback_rate', 'graph_breaks', 'speed_index']) {
        checkEq(`overview: points on the ${id} chart`, Number(await attr(`[data-testid=chart-${id}]`, 'data-points')), nonNull(g.releases, id));
      }
      checkEq('overview: canvases drawn', await count('.chart canvas'), 4);
      checkEq('overview: charts inside their frames', await chartsOverflowing(), '');
      checkEq('overview: database name in the header', (await text('[data-testid=db-name]')), String(overview.db));
    });
    // Note [Rollups]: the overview's first screen names the latest release's worst regressed
    // groups, and its release page lists the groups and the failures by cause before the cases.
    await step('overview: the latest release\'s worst groups on the first screen', async () => {
      const lg = (g.latest && g.latest.groups && g.latest.groups.list) || [];
      check('overview: the latest release has regression groups', lg.length > 0, 'none in the data');
      checkEq('overview: group rows shown', await count('[data-testid=latest-groups] [data-testid=group-row]'), lg.length);
      if (lg.length) {
        const first = page.locator('[data-testid=latest-groups] [data-testid=group-row]').first();
        checkEq('overview: the first group is the worst', await first.getAttribute('data-group'), lg[0].group);
        checkEq('overview: its cases moved', (await first.locator('[data-testid=group-moved]').textContent()).trim(),
          `${lg[0].moved}` + (lg[0].cases ? ` of ${lg[0].cases}` : ''));
        const box = await first.boundingBox();
        const vh = page.viewportSize().height;
        check('overview: the worst group is above the fold', box && box.y + box.height <= vh, box ? `at y=${box.y} of ${vh}` : 'not laid out');
      }
      // Note [Triage]: the acknowledged group (run_browser_tests.sh acks one) is apart, with its note.
      const acked = (g.latest && g.latest.groups && g.latest.groups.acked) || [];
      check('overview: the acknowledged group is in the data', acked.length > 0, 'no acked group');
      checkEq('overview: acknowledged groups shown apart', await count('[data-testid=latest-groups] [data-testid=acked-row]'), acked.length);
      if (acked.length) {
        check('overview: the acknowledged group is not among the open ones', !lg.some((x) => x.group === acked[0].group && x.change === acked[0].change), acked[0].group);
        check('overview: its note is shown', (await text('[data-testid=latest-groups] [data-testid=ack-note]')).includes('the tile retune'), 'no note');
      }
      await page.screenshot({ path: path.join(shots, 'overview_first_screen.png'), fullPage: false });
      await go(`#/${gid}/latest`, 'latest');
      const order = await page.evaluate(() => ['groups', 'causes', 'regressions'].map((id) => {
        const e = document.querySelector(`[data-testid=${id}]`);
        return e ? e.getBoundingClientRect().top + window.scrollY : -1;
      }));
      check('release page: groups, then causes, then the cases', order[0] >= 0 && order[0] < order[1] && order[1] < order[2], JSON.stringify(order));
      checkEq('release page: group rows', await count('[data-testid=groups] [data-testid=group-row]'), (readData(site, `${gid}/latest`).groups.list || []).length);
      await go(`#/${gid}/overview`, 'overview');
    });
    // Note [Change points on every series]: each chart marks its own series' change points.
    const cpKinds = { speed: 'speed_index', pass: 'pass_rate', fallback: 'fallback_rate', breaks: 'graph_breaks' };
    const cpCount = (kind) => g.releases.filter((r) => r.change_point && r.change_point[kind]).length;
    const cpSpeed = cpCount('speed'), cpPass = cpCount('pass');
    const cpAll = Object.keys(cpKinds).reduce((a, k) => a + cpCount(k), 0);
    const cpRows = g.releases.filter((r) => r.change_point && Object.keys(cpKinds).some((k) => r.change_point[k])).length;
    await step('overview change points', async () => {
      if (!cpAll) console.log('note: the data has no change point; checking that none is shown');
      for (const [kind, chart] of Object.entries(cpKinds)) {
        checkEq(`overview: ${kind} change point markers on the ${chart} chart`, Number(await attr(`[data-testid=chart-${chart}]`, 'data-cp-markers')), cpCount(kind));
      }
      const markers = page.locator('[data-testid=cp-marker]');
      checkEq('overview: change point markers in the page', await markers.count(), cpAll);
      let visible = 0;
      for (let i = 0; i < await markers.count(); i++) if (await markers.nth(i).isVisible()) visible++;
      checkEq('overview: change point markers visible', visible, cpAll);
      checkEq('overview: change points listed in text', await count('[data-testid=cp-item]'), cpAll);
      checkEq('overview: release rows marked as change points', await count('[data-testid=release-row][data-change-point]'), cpRows);
    });
    await step('overview screenshot', async () => {
      await page.screenshot({ path: path.join(shots, 'overview.png'), fullPage: true });
    });
    await step('overview per week', async () => {
      await page.evaluate(() => document.body.removeAttribute('data-ready'));
      await page.click('[data-testid=axis-week]');
      await ready('overview');
      const W = (g.weeks || []).length;
      checkEq('overview per week: rows in the weeks table', await count('[data-testid=week-row]'), W);
      checkEq('overview per week: points on the pass_rate chart', Number(await attr('[data-testid=chart-pass_rate]', 'data-points')), nonNull(g.weeks || [], 'pass_rate_ran') + nonNull(g.weeks || [], 'ran_share'));
      // No change point on a weekly series too short for the method (4 points, docs/dashboard.md).
      const weekCps = (g.weeks || []).filter((w) => w.change_point && Object.values(w.change_point).some(Boolean)).length;
      if (W < 4) checkEq('overview per week: no change point on a series of fewer than 4 weeks', weekCps, 0);
      checkEq('overview per week: change points listed', await count('[data-testid=cp-item]'), (g.weeks || []).reduce((a, w) => a + Object.values(w.change_point || {}).filter(Boolean).length, 0));
      checkEq('overview per week: charts inside their frames', await chartsOverflowing(), '');
      await page.screenshot({ path: path.join(shots, 'overview_weeks.png'), fullPage: false });
      await page.evaluate(() => document.body.removeAttribute('data-ready'));
      await page.click('[data-testid=axis-release]');
      await ready('overview');
      checkEq('overview per release again: rows', await count('[data-testid=release-row]'), N);
    });

    const index = readData(site, `${gid}/cases/index`);
    // ---------------------------------------------------------------- triage from any point
    // Note [Release pages]: a change point, a chart point and a release row open the release's
    // page, which lists what changed against the release before it.
    const hasPage = (i) => i > 0 && g.releases[i].regressions !== null && g.releases[i].regressions !== undefined;
    const releaseHeading = (i) => text(i === g.releases.length - 1 ? '[data-testid=latest-release]' : '[data-testid=release-name]');
    // A judged change point: its marker opens the release, whose page names the culprits that
    // gauntlet_synth_history put there (a speed step on the ops starting with 'm'; the real run's
    // failures failing from three releases before it on).
    const cpAt = g.releases.findIndex((r, i) => r.change_point && (r.change_point.speed || r.change_point.pass) && hasPage(i));
    await step('triage: a change point opens its release and its culprits', async () => {
      if (cpAt < 0) { check('triage: the history has a judged change point', false, 'none in the data'); return; }
      const rel = g.releases[cpAt];
      const kind = rel.change_point.speed ? 'speed' : 'pass';
      await go(`#/${gid}/overview`, 'overview');
      const chart = kind === 'speed' ? 'speed_index' : 'pass_rate';
      await clickTo(page.locator(`[data-testid=chart-${chart}] [data-testid=cp-marker][data-x="${cpAt}"]`), 'release');
      checkEq(`triage: the ${kind} change point opens its release`, await releaseHeading(cpAt), rel.release);
      const d = readData(site, `${gid}/releases/${cpAt}`);
      const regs = (d.regressions || []).filter((x) => x.key && !x.key.startsWith('suite:') && x.gate === (kind === 'speed' ? 'speed' : 'accuracy'));
      const latestStatus = new Map(index.keys.map((k, i) => [k, index.status[i]]));
      const culprits = kind === 'speed'
        ? regs.filter((x) => x.key.split('/')[1].startsWith('m'))
        : regs.filter((x) => ['FAIL', 'ERROR', 'CRASH', 'TIMEOUT', 'XPASS'].includes(latestStatus.get(x.key)));
      check(`triage: the ${kind} regressions at the change point are the cases the history changed there`, regs.length > 0 && culprits.length === regs.length,
        `${regs.length} regressions, ${culprits.length} of them culprits`);
      checkEq('triage: the page lists the release\'s regressions', Number(await attr('[data-testid=regression-count]', 'data-count')), (d.regressions || []).length);
      const shown = await page.locator('[data-testid=regression-row] [data-testid=case-link]').allTextContents();
      check('triage: a culprit is on the page', culprits.length > 0 && shown.includes(culprits[0].key), `${culprits.length ? culprits[0].key : 'none'} not among ${shown.length} rows`);
      if (kind === 'pass') {
        const causes = d.causes || [];
        checkEq('triage: the failures by cause count the new failures', causes.reduce((a, c) => a + c.new, 0), regs.filter((x) => x.change === 'status-change' || x.change === 'xpass').length);
        check('triage: failures grouped by cause', causes.length > 0 && causes.length < causes.reduce((a, c) => a + c.count, 0), `${causes.length} causes`);
      }
      await page.screenshot({ path: path.join(shots, 'release_change_point.png'), fullPage: false });
      // Its neighbours are a click away.
      await clickTo(page.locator('[data-testid=release-prev]'), 'release');
      const prevName = await page.locator('[data-testid=release-name], [data-testid=latest-release]').first().textContent();
      checkEq('triage: the previous release link', prevName, g.releases[cpAt - 1].release);
    });
    await step('triage: the change point list links to the release', async () => {
      if (cpAt < 0) return;
      await go(`#/${gid}/overview`, 'overview');
      const links = page.locator('[data-testid=cp-link]');
      const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      const want = `#/${encodeURIComponent(gid)}/release/${encodeURIComponent(g.releases[cpAt].release)}`;
      check('triage: the change point names its release page', hrefs.includes(want), `${want} not among ${JSON.stringify(hrefs)}`);
    });
    await step('triage: a chart point opens its release', async () => {
      const j = g.releases.findIndex((r, i) => hasPage(i) && i !== cpAt);
      if (j < 0) return;
      await go(`#/${gid}/overview`, 'overview');
      await page.locator('[data-testid=chart-pass_rate]').scrollIntoViewIfNeeded();  // below the worst groups
      const box = await page.locator('[data-testid=chart-pass_rate] .u-over').boundingBox();
      const n = g.releases.length;
      await page.evaluate(() => document.body.removeAttribute('data-ready'));
      // The x scale runs from -0.5 to n - 0.5: point j is at (j + 0.5) / n of the width.
      await page.mouse.move(box.x + ((j + 0.5) / n) * box.width, box.y + box.height / 2);
      await page.mouse.click(box.x + ((j + 0.5) / n) * box.width, box.y + box.height / 2);
      await ready('release');
      checkEq('triage: the clicked point\'s release', await releaseHeading(j), g.releases[j].release);
    });
    await step('triage: a release row opens its release', async () => {
      const j = g.releases.findIndex((r, i) => i > 0 && !hasPage(i));
      await go(`#/${gid}/overview`, 'overview');
      const rows = page.locator('[data-testid=release-row]');  // newest first
      if (j > 0) {
        await clickTo(rows.nth(n0(j)).locator('td').nth(3), 'release');
        checkEq('triage: a release not compared says so', await count('[data-testid=release-not-judged]'), 1);
      }
      await go(`#/${gid}/overview`, 'overview');
      await clickTo(page.locator('[data-testid=release-row]').nth(1).locator('td').nth(3), 'release');
      checkEq('triage: the clicked row\'s release', await releaseHeading(g.releases.length - 2), g.releases[g.releases.length - 2].release);
    });
    // ---------------------------------------------------------------- latest
    let firstRegKey = null;
    if (!g.latest) {
      console.log('note: the group has one release; no latest-release comparison to check');
      await step('latest: single release', async () => {
        await go(`#/${gid}/latest`, 'latest');
        checkEq('latest: says there is no baseline', await count('[data-testid=no-baseline]'), 1);
      });
    } else {
      const latest = readData(site, `${gid}/latest`);
      const regs = latest.regressions || [];
      await step('latest view', async () => {
        await clickTo(page.locator('[data-testid=nav-latest]'), 'latest');
        checkEq('latest: release shown', (await text('[data-testid=latest-release]')), String(latest.candidate.release));
        for (const gate of ['accuracy', 'speed', 'coverage']) {
          checkEq(`latest: ${gate} regressions count`, (await text(`[data-testid=gate-count-${gate}]`)).replace(/,/g, ''), String((latest.counts || {})[gate] || 0));
        }
        // Throughput per unit (every case records its work since schema 7), cost only with a price.
        const units = latest.throughput || [];
        check('latest: throughput of the release in the data', units.length > 0, 'no throughput');
        for (const t of units) {
          checkEq(`latest: throughput of ${t.unit} shown`, await count(`[data-testid=throughput-${t.unit}]`), 1);
          checkEq(`latest: cost of ${t.unit} shown`, await count(`[data-testid=cost-${t.unit}]`),
            typeof t.candidate_cost_per_million === 'number' ? 1 : 0);
        }
        checkEq('latest: regressions listed', Number(await attr('[data-testid=regression-count]', 'data-count')), regs.length);
        if (regs.length) {
          const rows = await count('[data-testid=regression-row]');
          check('latest: the regression list shows rows', rows > 0, 'no rows');
          checkEq('latest: rows on the first page', rows, Math.min(PAGE_SIZE, regs.length));
          const r0 = regs[0];
          const want = r0.repro || `gauntlet repro '${r0.key.replace(/'/g, "'\\''")}' --backend ${g.backend}`;
          checkEq('latest: repro command of the first regression', await page.locator('[data-testid=regression-row] [data-testid=repro]').first().textContent(), want);
          checkEq('latest: key of the first regression', await page.locator('[data-testid=regression-row] [data-testid=case-link]').first().textContent(), r0.key);
        } else {
          console.log('note: the latest release has no regressions');
          checkEq('latest: says there are no regressions', await count('[data-testid=no-regressions]'), 1);
        }
        checkEq('latest: missing cases listed', await count('[data-testid=missing-row]'), (latest.missing || []).length);
        // Failures by cause: every failing case of the release counted once, in fewer rows.
        const causes = latest.causes || [];
        const failing = index.status.filter((st) => ['FAIL', 'ERROR', 'CRASH', 'TIMEOUT', 'XPASS'].includes(st)).length;
        checkEq('latest: cause rows', await count('[data-testid=cause-row]'), Math.min(PAGE_SIZE, causes.length));
        checkEq('latest: the causes count every failing case once', causes.reduce((a, c) => a + c.count, 0), failing);
        const exp = causes.filter((c) => c.op === 'exp' && c.status === 'FAIL');
        const expFails = index.keys.filter((k, i) => k.split('/')[1] === 'exp' && index.status[i] === 'FAIL').length;
        check('latest: the exp fault\'s failures are grouped', expFails > 1 && exp.length >= 1 && exp.length < expFails &&
          exp.reduce((a, c) => a + c.count, 0) === expFails, `${expFails} failing exp cases in ${exp.length} causes`);
        checkEq('latest: still failing shown', (await text('[data-testid=still-failing-count]')).replace(/,/g, ''), String(latest.still_failing_total));
      });
      await step('latest screenshot', async () => {
        await page.screenshot({ path: path.join(shots, 'regressions.png'), fullPage: false });
      });
      // Filters: each one picks a value that changes the list, and every row shown has it.
      const cols = { gate: 0, family: 5, dtype: 6, mode: 7, status: 8 };
      for (const field of ['dtype', 'mode', 'family', 'status', 'gate']) {
        await step(`latest: filter ${field}`, async () => {
          const tally = new Map();
          for (const r of regs) { const v = r[field] === null || r[field] === undefined ? '' : String(r[field]); if (v) tally.set(v, (tally.get(v) || 0) + 1); }
          const opts = await page.locator(`[data-testid=filter-${field}] option`).evaluateAll((os) => os.map((x) => x.value).filter(Boolean));
          const cands = opts.filter((v) => tally.has(v));
          if (!cands.length) { console.log(`note: no ${field} value to filter the regressions by`); return; }
          cands.sort((a, b) => {
            const sa = tally.get(a) < regs.length ? 1 : 0, sb = tally.get(b) < regs.length ? 1 : 0;
            return sb - sa || tally.get(b) - tally.get(a);
          });
          const v = cands[0];
          const want = tally.get(v);
          await page.selectOption(`[data-testid=filter-${field}]`, v);
          checkEq(`latest: filter ${field}=${v} count`, await waitCount('[data-testid=regression-count]', want), want);
          if (want < regs.length) check(`latest: filter ${field} changes the list`, want !== regs.length);
          const cells = await page.locator('[data-testid=regression-row]').evaluateAll((rows, c) => rows.map((r) => r.children[c].textContent.trim()), cols[field]);
          const shown = field === 'gate' ? v.toLowerCase() : v;
          const bad = cells.filter((x) => (field === 'gate' ? x.toLowerCase() : x) !== shown);
          check(`latest: filter ${field}=${v} rows all match`, cells.length === Math.min(want, PAGE_SIZE) && bad.length === 0, `${cells.length} rows, ${bad.length} not ${v}`);
          await page.selectOption(`[data-testid=filter-${field}]`, '');
          await waitCount('[data-testid=regression-count]', regs.length);
        });
      }
      await step('latest: key search', async () => {
        if (!regs.length) return;
        const key = regs[Math.floor(regs.length / 2)].key;
        const q = key.slice(0, Math.max(4, Math.ceil(key.length * 0.6))).toUpperCase();
        const want = regs.filter((r) => String(r.key).toLowerCase().includes(q.toLowerCase())).length;
        await page.fill('[data-testid=regression-search]', q);
        checkEq(`latest: search "${q}" count`, await waitCount('[data-testid=regression-count]', want), want);
        const keys = await page.locator('[data-testid=regression-row] [data-testid=case-link]').allTextContents();
        check('latest: search shows the key', keys.includes(key), `${key} not among ${keys.length} rows`);
        await page.fill('[data-testid=regression-search]', '');
        await waitCount('[data-testid=regression-count]', regs.length);
      });
      // Clicking a regression (its row) opens the case.
      await step('latest: click a regression', async () => {
        if (!regs.length) return;
        firstRegKey = regs[0].key;
        await clickTo(page.locator('[data-testid=regression-row]').first().locator('td').nth(3), 'case');
        checkEq('case (from a regression): key shown', await text('[data-testid=case-key]'), firstRegKey);
        check('case (from a regression): address', (await page.evaluate(() => location.hash)) === `#/${gid}/case/${encodeURIComponent(firstRegKey)}`, await page.evaluate(() => location.hash));
      });
    }

    // ---------------------------------------------------------------- case drill-down
    const caseKey = firstRegKey || index.keys[Math.floor(index.keys.length / 2)];
    await step('case drill-down', async () => {
      const i = index.keys.indexOf(caseKey);
      const file = readData(site, `${gid}/cases/${Math.floor(i / index.per_file)}`);
      const c = file.cases.find((x) => x.key === caseKey);
      if (!firstRegKey) await go(`#/${gid}/case/${encodeURIComponent(caseKey)}`, 'case');
      checkEq('case: key shown', await text('[data-testid=case-key]'), caseKey);
      const R = file.releases.length;
      checkEq('case: history rows (one per release)', await count('[data-testid=case-history-row]'), R);
      // Newest first: row 0 is the last release.
      const rows = await page.locator('[data-testid=case-history-row]').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent)));
      const st = rows.map((r) => r[1]);
      const wantSt = c.status.slice().reverse().map((s) => (s === null ? 'not run' : s));
      checkEq('case: status per release', JSON.stringify(st), JSON.stringify(wantSt));
      const times = rows.filter((r) => r[2] !== '\u2014').length;
      checkEq('case: times shown', times, c.time_us.filter((x) => typeof x === 'number').length);
      const errs = rows.map((r) => r[6]).filter(Boolean);
      checkEq('case: error texts shown', JSON.stringify(errs), JSON.stringify(c.error.slice().reverse().filter((e) => e !== null && e !== '')));
      // Note [Repro from the record]: the latest release the case ran in, from the database.
      let lastRun = null;
      c.status.forEach((s, j) => { if (s !== null && g.releases[j]) lastRun = g.releases[j].run_id; });
      const dbWord = /^[A-Za-z0-9_\-.,/:=+@%]+$/.test(overview.db_path) ? overview.db_path : `'${overview.db_path.replace(/'/g, "'\\''")}'`;
      const repro = `gauntlet repro '${caseKey.replace(/'/g, "'\\''")}' --db ${dbWord} --run ${lastRun}`;
      checkEq('case: repro command', await text('[data-testid=case-repro]'), repro);
      checkEq('case: charts inside their frames', await chartsOverflowing(), '');
      checkEq('case: points on the time chart', Number(await attr('[data-testid=chart-case_time]', 'data-points')), c.time_us.filter((x) => typeof x === 'number').length);
      await page.screenshot({ path: path.join(shots, 'case.png'), fullPage: true });
    });
    // The case charts (issue 23): axis labels that differ, status markers, the tolerance line, a
    // log axis only for positive errors, "—" where nothing was compared.
    const caseOf = (key) => {
      const i = index.keys.indexOf(key);
      const file = readData(site, `${gid}/cases/${Math.floor(i / index.per_file)}`);
      return file.cases.find((x) => x.key === key);
    };
    const findCase = (pred) => {
      for (let f = 0; f * index.per_file < index.keys.length; f++) {
        const hit = readData(site, `${gid}/cases/${f}`).cases.find(pred);
        if (hit) return hit;
      }
      return null;
    };
    await step('case charts: status markers, tolerance line, distinct labels', async () => {
      const c = caseOf(caseKey);
      await go(`#/${gid}/case/${encodeURIComponent(caseKey)}`, 'case');
      const notPass = c.status.filter((s) => s !== null && s !== 'PASS').length;
      checkEq('case charts: a status marker per release not PASS (time chart)', Number(await attr('[data-testid=chart-case_time]', 'data-status-markers')), notPass);
      const labels = String(await attr('[data-testid=chart-case_time]', 'data-y-labels')).split('|');
      checkEq('case charts: time axis labels differ', new Set(labels).size, labels.length);
      if (await count('[data-testid=chart-case_errors] canvas')) {
        check('case charts: the error chart has the tolerance line', String(await attr('[data-testid=chart-case_errors]', 'data-series')).split(',').includes('atol'));
        checkEq('case charts: status markers on the error chart', Number(await attr('[data-testid=chart-case_errors]', 'data-status-markers')), notPass);
      }
    });
    await step('case charts: no log axis without a positive error', async () => {
      const exact = findCase((x) => x.max_abs_err.some((v) => v === 0) && x.max_abs_err.concat(x.max_rel_err).every((v) => v === null || v <= 0));
      if (!exact) { console.log('note: no case with only exact results'); return; }
      await go(`#/${gid}/case/${encodeURIComponent(exact.key)}`, 'case');
      checkEq('case charts: an exact case says so instead of a log chart', await count('[data-testid=chart-case_errors] [data-testid=errors-none]'), 1);
      checkEq('case charts: no error canvas for it', await count('[data-testid=chart-case_errors] canvas'), 0);
    });
    await step('case charts: errors not measured show as a dash', async () => {
      const notCompared = ['ERROR', 'CRASH', 'TIMEOUT', 'UNSUPPORTED', 'SKIP'];
      const bad = findCase((x) => x.status.some((s, j) => notCompared.includes(s) && x.max_abs_err[j] !== null));
      check('case charts: no error figure for a release that compared nothing (data)', !bad, bad ? bad.key : '');
      const c = findCase((x) => x.status.some((s) => notCompared.includes(s)));
      if (!c) { console.log('note: no case that was not compared in some release'); return; }
      await go(`#/${gid}/case/${encodeURIComponent(c.key)}`, 'case');
      const rows = await page.locator('[data-testid=case-history-row]').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent)));
      const wrong = rows.filter((r) => notCompared.includes(r[1]) && (r[4] !== '\u2014' || r[5] !== '\u2014'));
      checkEq('case charts: a release that compared nothing shows "—" for its errors', wrong.length, 0);
    });
    await step('case: unknown key', async () => {
      await go(`#/${gid}/case/${encodeURIComponent('op/no_such_op/f32/1/contig/eager')}`, 'case');
      checkEq('case: unknown key says so', await count('[data-testid=case-missing]'), 1);
    });

    // ---------------------------------------------------------------- cases search
    await step('cases search', async () => {
      const keys = index.keys;
      await clickTo(page.locator('[data-testid=nav-cases]'), 'cases');
      checkEq('cases: all listed', Number(await attr('[data-testid=cases-count]', 'data-count')), keys.length);
      checkEq('cases: rows on the first page', await count('[data-testid=case-row]'), Math.min(PAGE_SIZE, keys.length));
      if (keys.length > PAGE_SIZE) {
        await page.locator('[data-testid=cases-pager] [data-testid=page-next]').click();
        await page.waitForFunction((k) => { const a = document.querySelector('[data-testid=case-row] [data-testid=case-link]'); return a && a.textContent === k; }, keys[PAGE_SIZE], { timeout: 5000 }).catch(() => {});
        checkEq('cases: second page starts with key 101', await page.locator('[data-testid=case-row] [data-testid=case-link]').first().textContent(), keys[PAGE_SIZE]);
      }
      const key = keys[Math.floor(keys.length * 0.37)];
      const q = key.toUpperCase();
      const want = keys.filter((k) => k.toLowerCase().includes(key.toLowerCase())).length;
      await page.fill('[data-testid=case-search]', q);
      checkEq('cases: search by key count', await waitCount('[data-testid=cases-count]', want), want);
      const shown = await page.locator('[data-testid=case-row] [data-testid=case-link]').allTextContents();
      check('cases: search finds the key', shown.includes(key), `${key} not among ${JSON.stringify(shown.slice(0, 5))}`);
      await page.fill('[data-testid=case-search]', '');
      await waitCount('[data-testid=cases-count]', keys.length);

      // Family filter.
      const famCount = new Map();
      index.family.forEach((f) => famCount.set(f, (famCount.get(f) || 0) + 1));
      const fams = [...famCount].sort((a, b) => (a[1] < keys.length ? 0 : 1) - (b[1] < keys.length ? 0 : 1) || b[1] - a[1]);
      const [fi, fn] = fams[0];
      const fam = index.families[fi];
      await page.selectOption('[data-testid=cases-family]', fam);
      checkEq(`cases: family=${fam} count`, await waitCount('[data-testid=cases-count]', fn), fn);
      const famCells = await page.locator('[data-testid=case-row]').evaluateAll((rows) => rows.map((r) => r.children[1].textContent));
      check(`cases: family=${fam} rows all match`, famCells.length > 0 && famCells.every((x) => x === fam), `${famCells.length} rows`);
      await page.selectOption('[data-testid=cases-family]', '');
      await waitCount('[data-testid=cases-count]', keys.length);

      // Status filter.
      const stCount = new Map();
      index.status.forEach((s) => { if (s) stCount.set(s, (stCount.get(s) || 0) + 1); });
      const sts = [...stCount].filter(([, n]) => n < keys.length).sort((a, b) => a[1] - b[1]);
      if (sts.length) {
        const [sv, sn] = sts.find(([s]) => s === 'FAIL') || sts[0];
        await page.selectOption('[data-testid=cases-status]', sv);
        checkEq(`cases: status=${sv} count`, await waitCount('[data-testid=cases-count]', sn), sn);
        const stCells = await page.locator('[data-testid=case-row]').evaluateAll((rows) => rows.map((r) => r.children[2].textContent));
        check(`cases: status=${sv} rows all match`, stCells.length > 0 && stCells.every((x) => x === sv), `${stCells.length} rows`);
        // Open one from the list.
        const k2 = await page.locator('[data-testid=case-row] [data-testid=case-link]').first().textContent();
        await clickTo(page.locator('[data-testid=case-row]').first().locator('td').nth(1), 'case');
        checkEq('cases: a clicked row opens its case', await text('[data-testid=case-key]'), k2);
      } else console.log('note: every case has the same status; no status filter to check');
    });

    // ---------------------------------------------------------------- status grid
    await step('status grid', async () => {
      const grid = readData(site, `${gid}/grid`);
      const keys = index.keys;
      const m = grid.releases.length;
      const latest = grid.status[m - 1];
      const codeOf = (name) => Object.keys(grid.codes).find((c) => grid.codes[c] === name);
      await clickTo(page.locator('[data-testid=nav-grid]'), 'grid');
      checkEq('grid: a row per case', Number(await attr('[data-testid=grid]', 'data-rows')), keys.length);
      checkEq('grid: a column per release (the newest, at most 50)', await count('[data-testid=grid-release]'), Math.min(N, 50));
      const drawn = await count('[data-testid=grid-row]');
      check('grid: only the rows in view are in the page', drawn > 0 && (keys.length < 80 || drawn < keys.length), `${drawn} rows drawn of ${keys.length}`);
      // The first row's cells against grid.js.
      const k0 = await attr('[data-testid=grid-row]', 'data-key');
      const i0 = keys.indexOf(k0);
      const cells0 = await page.locator('[data-testid=grid-row]').first().locator('[data-testid=grid-cell]').evaluateAll((cs) => cs.map((c) => c.getAttribute('data-status')));
      const want0 = grid.status.map((col) => (col[i0] === grid.absent ? '' : grid.codes[col[i0]]));
      checkEq('grid: the first row is the first key', k0, keys[0]);
      checkEq('grid: the first row\'s cells are its statuses', JSON.stringify(cells0), JSON.stringify(want0));
      // Scrolled to the end, the last case is drawn.
      await page.evaluate(() => { const s = document.querySelector('[data-testid=grid]'); s.scrollTop = s.scrollHeight; });
      await page.waitForFunction((k) => Array.from(document.querySelectorAll('[data-testid=grid-row]')).some((r) => r.getAttribute('data-key') === k), keys[keys.length - 1], { timeout: 5000 }).catch(() => {});
      check('grid: scrolled to the end, the last case is drawn', await page.locator(`[data-testid=grid-row][data-key="${keys[keys.length - 1]}"]`).count() === 1, keys[keys.length - 1]);
      await page.screenshot({ path: path.join(shots, 'grid.png'), fullPage: false });

      // Filters, each against grid.js.
      const fail = codeOf('FAIL');
      const nFail = [...latest].filter((c) => c === fail).length;
      await page.selectOption('[data-testid=grid-status]', 'FAIL');
      checkEq('grid: status FAIL in the latest release', await waitCount('[data-testid=grid-count]', nFail), nFail);
      const lastCells = await page.locator('[data-testid=grid-row]').evaluateAll((rows) => rows.map((r) => { const c = r.querySelectorAll('[data-testid=grid-cell]'); return c[c.length - 1].getAttribute('data-status'); }));
      check('grid: every row shown fails in the latest release', lastCells.length > 0 && lastCells.every((x) => x === 'FAIL'), JSON.stringify(lastCells.slice(0, 5)));
      const nAny = keys.filter((_, i) => grid.status.some((col) => col[i] === fail)).length;
      await page.selectOption('[data-testid=grid-where]', 'any');
      checkEq('grid: status FAIL in any release', await waitCount('[data-testid=grid-count]', nAny), nAny);
      await page.screenshot({ path: path.join(shots, 'grid-fail.png'), fullPage: false });
      // A FAIL cell opens its case at that release.
      const cell = page.locator('[data-testid=grid-cell][data-status=FAIL]').first();
      const cellKey = await cell.evaluate((c) => c.parentElement.getAttribute('data-key'));
      const cellRel = await cell.getAttribute('data-release');
      await clickTo(cell, 'case');
      checkEq('grid: a cell opens its case', await text('[data-testid=case-key]'), cellKey);
      checkEq('grid: the case page marks the cell\'s release', await attr('[data-testid=case-history-row][data-marked=true]', 'data-release'), cellRel);
      checkEq('grid: the marked release has the cell\'s status', await page.locator('[data-testid=case-history-row][data-marked=true] td').nth(1).textContent(), 'FAIL');
      // Back: the filters are in the address.
      await page.goBack();
      await ready('grid');
      checkEq('grid: the filters survive going back', Number(await attr('[data-testid=grid-count]', 'data-count')), nAny);
      await page.selectOption('[data-testid=grid-status]', '');
      await waitCount('[data-testid=grid-count]', keys.length);
      // Status changed across the releases shown.
      const nChanged = keys.filter((_, i) => new Set(grid.status.map((col) => col[i]).filter((c) => c !== grid.absent)).size > 1).length;
      await page.check('[data-testid=grid-changed]');
      checkEq('grid: status changed', await waitCount('[data-testid=grid-count]', nChanged), nChanged);
      await page.uncheck('[data-testid=grid-changed]');
      await waitCount('[data-testid=grid-count]', keys.length);
      // Dtype, mode and key search.
      const d0 = grid.dtypes.map((d, j) => [d, grid.dtype.filter((x) => x === j).length]).sort((a, b) => a[1] - b[1])[0];
      await page.selectOption('[data-testid=grid-dtype]', d0[0]);
      checkEq(`grid: dtype ${d0[0]}`, await waitCount('[data-testid=grid-count]', d0[1]), d0[1]);
      await page.selectOption('[data-testid=grid-dtype]', '');
      const md = grid.modes.map((d, j) => [d, grid.mode.filter((x) => x === j).length]).sort((a, b) => a[1] - b[1])[0];
      await page.selectOption('[data-testid=grid-mode]', md[0]);
      checkEq(`grid: mode ${md[0]}`, await waitCount('[data-testid=grid-count]', md[1]), md[1]);
      await page.selectOption('[data-testid=grid-mode]', '');
      const q = keys[Math.floor(keys.length / 2)].split('/').slice(0, 2).join('/').toUpperCase();
      const nQ = keys.filter((k) => k.toLowerCase().includes(q.toLowerCase())).length;
      await page.fill('[data-testid=grid-search]', q);
      checkEq(`grid: key search ${q}`, await waitCount('[data-testid=grid-count]', nQ), nQ);

      // Load time of the grid against the overview's, in fresh pages (printed, not judged: the
      // 50 x 100,000 figure is ci/dashboard_bench.sh's).
      const timed = async (view) => {
        const p2 = await context.newPage();
        watch(p2);
        try {
          await p2.goto(`${base}index.html#/${encodeURIComponent(gid)}/${view}`);
          await p2.waitForFunction((v) => document.body.dataset.ready === v, view, { timeout: TIMEOUT });
          return await p2.evaluate((v) => performance.getEntriesByName(v + '-ready')[0].startTime, view);
        } finally { await p2.close(); }
      };
      const tOv = await timed('overview'), tGrid = await timed('grid');
      console.log(`grid: interactive in ${tGrid.toFixed(0)} ms, the overview in ${tOv.toFixed(0)} ms (ratio ${(tGrid / tOv).toFixed(2)}), ${keys.length} cases x ${m} releases`);
    });

    // ---------------------------------------------------------------- coverage, breakdown
    await step('coverage view', async () => {
      const cov = readData(site, `${gid}/coverage`);
      await clickTo(page.locator('[data-testid=nav-coverage]'), 'coverage');
      checkEq('coverage: fallback op rows', await count('[data-testid=fallback-row]'), Math.min(PAGE_SIZE, (cov.fallback_ops || []).length));
      checkEq('coverage: graph-break target rows', await count('[data-testid=graph-break-row]'), Math.min(PAGE_SIZE, (cov.graph_breaks || []).length));
      // each target's reasons and failed guards, where it has any
      const withWhy = (cov.graph_breaks || []).slice(0, PAGE_SIZE).filter((t) => (t.reasons || []).length + (t.guards || []).length > 0).length;
      checkEq('coverage: targets with a why', await count('[data-testid=graph-break-why]'), withWhy);
      if ((cov.fallback_ops || []).length) {
        checkEq('coverage: first op', await page.locator('[data-testid=fallback-row] td').first().textContent(), cov.fallback_ops[0].op);
      }
      await page.screenshot({ path: path.join(shots, 'coverage.png'), fullPage: true });
    });
    await step('breakdown view', async () => {
      const bd = readData(site, `${gid}/breakdown`);
      await clickTo(page.locator('[data-testid=nav-breakdown]'), 'breakdown');
      const want = ['family', 'dtype', 'mode'].reduce((s, d) => s + Object.keys((bd.by || {})[d] || {}).length, 0);
      checkEq('breakdown: rows (family + dtype + mode values)', await count('[data-testid=breakdown-row]'), want);
      checkEq('breakdown: sparklines (two per row)', await count('[data-testid=breakdown-row] [data-testid=sparkline]'), 2 * want);
      // The fallback rate of each op family in the latest release, as breakdown.js has it (the
      // cumsum fault makes one non-zero), never "—".
      const fam = (bd.by || {}).family || {};
      const famNames = Object.keys(fam).sort();
      const pct = (x) => (x * 100).toFixed(2) + '%';
      const wantFb = famNames.map((nm) => { const e = fam[nm][fam[nm].length - 1]; return e ? pct(e.fallback_rate) : '\u2014'; });
      const gotFb = await page.locator('[data-testid=breakdown-family] [data-testid=breakdown-row]').evaluateAll((rows) => rows.map((r) => r.children[5].textContent));
      checkEq('breakdown: the fallback rate of each family', JSON.stringify(gotFb), JSON.stringify(wantFb));
      check('breakdown: some family falls back', gotFb.some((x) => x !== '0.00%' && x !== '\u2014'), JSON.stringify(gotFb));
      if (want) {
        await page.locator('[data-testid=breakdown-row]').first().click();
        checkEq('breakdown: a row opens its releases', await count('[data-testid=breakdown-detail] tbody tr'), bd.releases.length);
      }
      await page.screenshot({ path: path.join(shots, 'breakdown.png'), fullPage: true });
    });

    // ---------------------------------------------------------------- other group
    const other = groups.find((x) => x.id !== gid);
    if (other) {
      await step('group selector', async () => {
        await go(`#/${gid}/overview`, 'overview');
        await page.evaluate(() => document.body.removeAttribute('data-ready'));
        await page.selectOption('[data-testid=group-select]', other.id);
        await ready('overview');
        checkEq(`group selector: ${other.backend}/${other.suite} release count`, (await text('[data-testid=release-count]')).trim(), String(other.releases.length));
        checkEq(`group selector: ${other.backend}/${other.suite} rows`, await count('[data-testid=release-row]'), other.releases.length);
        check('group selector: address', (await page.evaluate(() => location.hash)).startsWith(`#/${other.id}/overview`));
      });
    }
    await step('unknown group', async () => {
      await go('#/no-such-group/overview', 'error');
      checkEq('unknown group: says so', await count('[data-testid=no-group]'), 1);
    });

    // ---------------------------------------------------------------- load errors (expected)
    await step('load errors', async () => {
      const p2 = await context.newPage();
      watch(p2);
      expectErrors = true;
      try {
        await p2.route('**/data/*/coverage.js', (r) => r.fulfill({ status: 404, body: 'gone' }));
        await p2.goto(`${base}index.html#/${gid}/coverage`);
        await p2.waitForFunction(() => document.body.dataset.ready === 'error', null, { timeout: TIMEOUT });
        const msg = await p2.locator('[data-testid=load-error]').textContent();
        check('load errors: a missing data file is named', msg.includes(`data/${gid}/coverage.js`), msg);
        await p2.route('**/data/overview.js', (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: 'gauntletData("overview", {"schema_version": 2, "groups": []});' }));
        await p2.goto(`${base}index.html#/`);
        await p2.reload();
        await p2.waitForFunction(() => document.body.dataset.ready === 'error', null, { timeout: TIMEOUT });
        const msg2 = await p2.locator('[data-testid=load-error]').textContent();
        check('load errors: another schema major version is refused', /schema version 2/.test(msg2) && /version 1/.test(msg2), msg2);
      } finally {
        await p2.close();
        expectErrors = false;
      }
    });

    // ---------------------------------------------------------------- the whole session
    check('no console or page errors', errors.length === 0, errors.slice(0, 5).map(short).join(' | '));
    check('no request left the loopback host', foreign.length === 0, foreign.slice(0, 5).join(' '));
  });
  console.log(`screenshots in ${shots}`);
  finish(NAME);
}

runMain(NAME, main);
