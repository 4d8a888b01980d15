#!/usr/bin/env node
// Writes deterministic synthetic dashboard data, OUTDIR/data/**, exactly as dashboards/FORMAT.md
// describes it (schema version 1), for developing the site and for testing it alone. The real
// data comes from `gauntlet dashboard`.
//
//   node dashboards/tools/sample_data.mjs OUTDIR [--releases N] [--cases M] [--hostile]
//
// Two groups: sim/nightly (M cases, N releases) and cpu/smoke (fewer of both, starting later).
// The data has speed and pass-rate change points, regressions in the latest release (accuracy,
// speed, coverage), missing cases, new fallback ops and graph breaks. Every figure of the overview,
// latest, breakdown and coverage files is computed from the per-case histories written to the
// case files, so the files agree with each other.
//
// --hostile puts text that would run script if a page used it as HTML into a case key, an error
// text, a family, an op name, a graph-break target, the database name and a backend version.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const HOSTILE_SCRIPT = '<script>window.__pwned=1</script>';
export const HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">';
export const HOSTILE_KEY = `op/it's${HOSTILE_SCRIPT}${HOSTILE_IMG}/f32/8/contig/eager`;
export const HOSTILE_MISSING_KEY = `op/gone${HOSTILE_IMG}/f32/8/contig/eager`;
export const HOSTILE_ERROR = `RuntimeError: it's ${HOSTILE_SCRIPT} and ${HOSTILE_IMG} & more`;
export const HOSTILE_FAMILY = `evil${HOSTILE_IMG}`;
export const HOSTILE_OP = `aten::${HOSTILE_SCRIPT}`;
export const HOSTILE_TARGET = `block${HOSTILE_IMG}`;

const PER_FILE = 500;
const REGRESSION_CAP = 5000;
const FAILING = new Set(['FAIL', 'ERROR', 'CRASH', 'TIMEOUT', 'XPASS']);
const PASSING = new Set(['PASS', 'XFAIL', 'SKIP']);

// ---------------------------------------------------------------------------------------------
// Helpers

function usage(msg) {
  if (msg) process.stderr.write(`sample_data: ${msg}\n`);
  process.stderr.write('usage: node dashboards/tools/sample_data.mjs OUTDIR [--releases N] [--cases M] [--hostile]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { out: null, releases: 12, cases: 3000, hostile: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--hostile') o.hostile = true;
    else if (a === '--releases' || a === '--cases') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) usage(`${a} takes a positive integer`);
      o[a.slice(2)] = v;
    } else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (o.out === null) o.out = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!o.out) usage('OUTDIR is required');
  return o;
}

// FNV-1a, for per-key seeds.
function hash32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

// mulberry32: a small deterministic PRNG.
function rng(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gauss(r) {
  return Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}

const sig = (x, n) => (x === null ? null : Number(x.toPrecision(n)));

function shq(s) {
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

function isoWeek(d) {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  const monday = new Date(t.getTime() - (day - 1) * 86400000);
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const y = t.getUTCFullYear();
  const w = Math.ceil(((t.getTime() - Date.UTC(y, 0, 1)) / 86400000 + 1) / 7);
  return { week: `${y}-W${String(w).padStart(2, '0')}`, start: monday.toISOString().slice(0, 10) };
}

// A data file as FORMAT.md has it: a call of gauntletData with JSON whose <, >, &, U+2028 and
// U+2029 are \u escapes.
function dataFile(name, payload) {
  const json = JSON.stringify(payload).replace(/[<>&\u2028\u2029]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  return `gauntletData(${JSON.stringify(name)}, ${json});\n`;
}

function writeData(root, name, payload) {
  const file = path.join(root, 'data', name + '.js');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, dataFile(name, payload));
}

// ---------------------------------------------------------------------------------------------
// The synthetic catalog

const OPS = [
  ['abs', 'unary'], ['neg', 'unary'], ['exp', 'unary'], ['log', 'unary'], ['sqrt', 'unary'],
  ['sin', 'unary'], ['erfinv', 'unary'], ['floor', 'rounding'], ['round', 'rounding'],
  ['relu', 'activation'], ['gelu', 'activation'], ['silu', 'activation'], ['tanh', 'activation'],
  ['add', 'binary'], ['mul', 'binary'], ['div', 'binary'], ['pow', 'binary'], ['atan2', 'binary'],
  ['where', 'ternary'], ['addcmul', 'ternary'], ['lerp', 'ternary'],
  ['sum', 'reduce'], ['mean', 'reduce'], ['amax', 'reduce'], ['cumsum', 'reduce'], ['var', 'reduce'],
  ['softmax', 'norm'], ['layer_norm', 'norm'], ['rms_norm', 'norm'],
  ['matmul', 'linalg'], ['bmm', 'linalg'], ['conv2d', 'conv'], ['max_pool2d', 'pool'],
  ['index_select', 'index'], ['gather', 'index'], ['scatter_add', 'index'], ['cat', 'shape'],
];
const DTYPES = ['f32', 'bf16', 'f16', 'f64', 'i32'];
const LAYOUTS = ['contig', 't', 'step2', 'cl'];
const MODES = ['eager', 'eager-bwd'];
const SHAPES = ['_', '0x4', '1', '7', '64', '127', '4097', '17x31', '7x1x5', '33x256', '2x3x8x9',
  '1048576', '4x16x7x7', '1x33', '5x31'];
// Ops that fall back to the CPU in every release, and the one that starts to in the latest.
const FALLBACK = { erfinv: 'aten::erfinv', cumsum: 'aten::cumsum', scatter_add: 'aten::scatter_add' };
const NEW_FALLBACK = { op: 'gelu', dtype: 'bf16', name: 'aten::gelu' };
const TARGETS = ['llama_block', 'bert_attention', 'resnet_stage2', 'unet_down', 'moe_router'];

function makeKeys(count, salt) {
  // A mixed-radix count over op, mode, dtype, shape and layout; past those, a scalar argument.
  const keys = [];
  const nO = OPS.length, nS = SHAPES.length, nD = DTYPES.length, nL = LAYOUTS.length, nM = MODES.length;
  for (let i = 0; keys.length < count; i++) {
    let k = i + salt;
    const op = OPS[k % nO]; k = Math.floor(k / nO);
    const mode = MODES[k % nM]; k = Math.floor(k / nM);
    const dt = DTYPES[k % nD]; k = Math.floor(k / nD);
    const shape = SHAPES[k % nS]; k = Math.floor(k / nS);
    const lay = LAYOUTS[k % nL]; k = Math.floor(k / nL);
    const args = k > 0 ? `/scale=${k}` : '';
    keys.push({ key: `op/${op[0]}/${dt}/${shape}/${lay}/${mode}${args}`, op: op[0], family: op[1], dtype: dt, mode });
  }
  return keys;
}

// ---------------------------------------------------------------------------------------------
// One group

function buildGroup(spec, allReleases, hostile, root) {
  const R = spec.releases;
  const rels = allReleases.slice(allReleases.length - R);
  const salt = spec.id === 'g0' ? 0 : 11;
  let entries = makeKeys(spec.cases, salt);
  if (hostile) {
    entries = entries.slice(0, Math.max(0, entries.length - 2));
    entries.push({ key: HOSTILE_KEY, op: 'hostile', family: HOSTILE_FAMILY, dtype: 'f32', mode: 'eager', hostile: 'regress' });
    entries.push({ key: HOSTILE_MISSING_KEY, op: 'gone', family: 'unary', dtype: 'f32', mode: 'eager', hostile: 'missing' });
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  // Injected events, by release index in this group.
  const slowAt = R >= 4 ? Math.round(R * 0.4) : -1;     // everything ~8% slower
  const fastAt = R >= 6 ? Math.round(R * 0.75) : -1;    // ~7% faster again
  const dropAt = R >= 5 ? Math.round(R * 0.55) : -1;    // reduce/bf16 cases start failing
  const fixAt = R >= 8 ? Math.round(R * 0.85) : -1;     // ... and are fixed
  const speedLevel = [];
  { const rr = rng(hash32(spec.id + 'speed'));
    let f = 1;
    for (let j = 0; j < R; j++) {
      if (j === slowAt) f *= 1.08;
      if (j === fastAt) f *= 0.93;
      speedLevel.push(f * (1 + 0.003 * gauss(rr)));
    }
  }

  // Accumulators.
  const acc = [];
  for (let j = 0; j < R; j++) {
    acc.push({ cases: 0, counts: {}, fallback: 0, sumLog: 0, sumLog2: 0, nLog: 0,
      reg: { accuracy: 0, speed: 0, coverage: 0 } });
  }
  const dims = { family: new Map(), dtype: new Map(), mode: new Map() };
  const dimAcc = (dim, value) => {
    let a = dims[dim].get(value);
    if (!a) {
      a = Array.from({ length: R }, () => ({ cases: 0, pass: 0, fallback: 0, sumLog: 0, nLog: 0 }));
      dims[dim].set(value, a);
    }
    return a;
  };
  const fallbackOps = new Map();  // op -> per-release case counts
  const facets = { family: new Set(), dtype: new Set(), mode: new Set(), status: new Set() };
  const regressions = [];
  const missing = [];
  const index = { keys: [], family: [], families: [], status: [] };
  const famIndex = new Map();

  let fileCases = [];
  let fileNo = 0;
  const flush = () => {
    if (!fileCases.length) return;
    writeData(root, `${spec.id}/cases/${fileNo}`, {
      schema_version: 1, group: spec.id, file: fileNo, first: fileNo * PER_FILE,
      releases: rels.map((r) => r.release), cases: fileCases,
    });
    fileNo++;
    fileCases = [];
  };

  entries.forEach((e, ci) => {
    const r = rng(hash32(spec.id + '|' + e.key));
    const first = r() < 0.06 && R > 2 ? 1 + Math.floor(r() * (R - 2)) : 0;
    const goneAtLatest = e.hostile === 'missing' || (!e.hostile && R > 2 && r() < 0.002);
    const t0 = Math.exp(Math.log(2) + r() * (Math.log(20000) - Math.log(2)));
    const errScale = Math.pow(10, -9 + r() * 3);
    const unsupported = e.dtype === 'i32' && (e.family === 'activation' || e.family === 'norm');
    const skip = r() < 0.01;
    const xfail = !skip && r() < 0.006;
    const inDrop = e.family === 'reduce' && e.dtype === 'bf16' && hash32(e.key) % 3 === 0;
    const latestFail = e.hostile === 'regress' || (!e.hostile && r() < 0.004);
    const latestSlow = !e.hostile && r() < 0.012;
    const baseFallback = e.op in FALLBACK ? FALLBACK[e.op] : null;
    const newFallback = (e.op === NEW_FALLBACK.op && e.dtype === NEW_FALLBACK.dtype) || e.hostile === 'regress';

    const h = { key: e.key, status: [], time_us: [], max_abs_err: [], max_rel_err: [], error: [] };
    const fb = [];
    for (let j = 0; j < R; j++) {
      const present = j >= first && !(goneAtLatest && j === R - 1);
      if (!present) {
        h.status.push(null); h.time_us.push(null); h.max_abs_err.push(null);
        h.max_rel_err.push(null); h.error.push(null); fb.push(null);
        continue;
      }
      let st = 'PASS';
      let err = null;
      if (unsupported) { st = 'UNSUPPORTED'; err = `${e.dtype} is not supported by ${e.op} on ${spec.backend}`; }
      else if (skip) st = 'SKIP';
      else if (xfail) st = 'XFAIL';
      else if (inDrop && j >= dropAt && dropAt >= 0 && (fixAt < 0 || j < fixAt)) {
        st = 'FAIL';
        err = 'max_abs_err 0.0625 exceeds the tolerance (rtol 0.016, atol 1e-05) at index 17';
      } else if (latestFail && j === R - 1) {
        st = hash32(e.key) % 4 === 0 ? 'ERROR' : 'FAIL';
        err = st === 'ERROR' ? `RuntimeError: ${spec.backend} kernel ${e.op} failed: invalid launch configuration`
          : 'max_abs_err 0.5 exceeds the tolerance (rtol 1.3e-06, atol 1e-05) at index 3';
        if (e.hostile) { st = 'FAIL'; err = HOSTILE_ERROR; }
      } else if (r() < 0.002) {
        st = 'FAIL';
        err = 'max_abs_err 0.0039 exceeds the tolerance (rtol 1.3e-06, atol 1e-05) at index 0';
      }
      const timed = st !== 'UNSUPPORTED' && st !== 'SKIP' && st !== 'ERROR';
      let t = null;
      if (timed) {
        t = t0 * speedLevel[j] * (1 + 0.01 * gauss(r));
        if (latestSlow && j === R - 1) t *= 1.35;
        t = sig(t, 4);
      }
      const compared = st === 'PASS' || st === 'FAIL' || st === 'XFAIL';
      let ea = null, er = null;
      if (compared) {
        ea = st === 'FAIL' ? (err.startsWith('max_abs_err 0.5') || e.hostile ? 0.5 : 0.0625) : errScale * (1 + 0.2 * r());
        er = ea * (0.5 + r());
        ea = sig(ea, 3); er = sig(er, 3);
      }
      h.status.push(st); h.time_us.push(t); h.max_abs_err.push(ea); h.max_rel_err.push(er); h.error.push(err);
      let f = baseFallback;
      if (newFallback && j === R - 1) f = e.hostile ? HOSTILE_OP : NEW_FALLBACK.name;
      fb.push(f);
    }

    // Aggregates.
    for (let j = 0; j < R; j++) {
      const st = h.status[j];
      if (st === null) continue;
      const a = acc[j];
      a.cases++;
      a.counts[st] = (a.counts[st] || 0) + 1;
      if (fb[j]) {
        a.fallback++;
        if (!fallbackOps.has(fb[j])) fallbackOps.set(fb[j], new Array(R).fill(0));
        fallbackOps.get(fb[j])[j]++;
      }
      let lr = null;
      if (j > 0 && h.time_us[j] !== null && h.time_us[j - 1] !== null) {
        lr = Math.log(h.time_us[j] / h.time_us[j - 1]);
        a.sumLog += lr; a.sumLog2 += lr * lr; a.nLog++;
      }
      for (const [dim, v] of [['family', e.family], ['dtype', e.dtype], ['mode', e.mode]]) {
        const d = dimAcc(dim, v)[j];
        d.cases++;
        if (st === 'PASS') d.pass++;
        if (fb[j]) d.fallback++;
        if (lr !== null) { d.sumLog += lr; d.nLog++; }
      }
      if (j > 0) {
        const ps = h.status[j - 1];
        if (ps !== null && PASSING.has(ps) && (FAILING.has(st) || st === 'UNSUPPORTED')) a.reg.accuracy++;
        if (lr !== null && Math.exp(lr) > 1.2) a.reg.speed++;
        if (ps !== null && fb[j] && !fb[j - 1]) a.reg.coverage++;
      }
      if (j === R - 1) {
        facets.family.add(e.family); facets.dtype.add(e.dtype); facets.mode.add(e.mode); facets.status.add(st);
      }
    }
    if (R >= 2) {
      const b = R - 2, c = R - 1;
      if (h.status[b] !== null && h.status[c] === null) acc[c].reg.coverage++;  // missing
    }

    // Latest against its baseline.
    if (R >= 2) {
      const b = R - 2, c = R - 1;
      const base = { family: e.family, dtype: e.dtype, mode: e.mode, repro: `gauntlet repro ${shq(e.key)} --backend ${spec.backend}`,
        case_file: Math.floor(ci / PER_FILE) };
      const sb = h.status[b], sc = h.status[c];
      if (sb !== null && sc === null) {
        missing.push(e.key);
        regressions.push({ key: e.key, gate: 'coverage', change: 'missing', detail: `${sb} -> missing`,
          ratio: null, baseline: null, candidate: null, ...base, status: null });
      } else if (sb !== null && sc !== null) {
        if (PASSING.has(sb) && (FAILING.has(sc) || sc === 'UNSUPPORTED')) {
          const detail = h.max_abs_err[c] !== null
            ? `${sb} -> ${sc}: max_abs_err ${h.max_abs_err[c]} (rtol 1.3e-06, atol 1e-05)`
            : `${sb} -> ${sc}: ${h.error[c] || ''}`;
          regressions.push({ key: e.key, gate: 'accuracy', change: 'status-change', detail, ratio: null,
            baseline: h.max_abs_err[b], candidate: h.max_abs_err[c], ...base, status: sc });
        }
        if (h.time_us[b] !== null && h.time_us[c] !== null) {
          const ratio = h.time_us[c] / h.time_us[b];
          if (ratio > 1.2) {
            regressions.push({ key: e.key, gate: 'speed', change: 'slower',
              detail: `${spec.metric} time ${h.time_us[b]} us -> ${h.time_us[c]} us (x${ratio.toFixed(2)})`,
              ratio: sig(ratio, 4), baseline: h.time_us[b], candidate: h.time_us[c], ...base, status: sc });
          }
        }
        if (fb[c] && !fb[b]) {
          regressions.push({ key: e.key, gate: 'coverage', change: 'new-fallback', detail: `falls back to the CPU: ${fb[c]}`,
            ratio: null, baseline: null, candidate: null, ...base, status: sc });
        }
      }
    }

    // Index and case file.
    if (!famIndex.has(e.family)) { famIndex.set(e.family, index.families.length); index.families.push(e.family); }
    index.keys.push(e.key);
    index.family.push(famIndex.get(e.family));
    index.status.push(h.status[R - 1] === null ? '' : h.status[R - 1]);
    fileCases.push(h);
    if (fileCases.length === PER_FILE) flush();
  });
  flush();

  // Graph breaks: synthetic per-target counts, with a jump when the slowdown lands.
  const graphBreaks = TARGETS.map((t, ti) => {
    const name = hostile && ti === 1 ? HOSTILE_TARGET : t;
    const cases = [], breaks = [];
    for (let j = 0; j < R; j++) {
      const base = ti === 0 ? 3 : ti === 1 ? (j >= slowAt && slowAt >= 0 ? 4 : 1) : ti === 2 ? (j >= R - 1 ? 2 : 0) : 1 + (ti % 2);
      cases.push(base);
      breaks.push(base * (ti === 0 ? 2 : 1));
    }
    // why, as the latest release recorded it: a reason per target, a failed guard on the first
    const last = cases[R - 1];
    const reasons = last > 0 ? [{ reason: `${name}: no kernel on the device (<traced op>:2)`, n: last }] : [];
    const guards = ti === 0 ? [{ guard: 'size mismatch at index 0. expected 8, actual 16', n: 1 }] : [];
    return { target: name, cases, breaks, recompiles: cases.map((c) => (ti === 0 ? c : 0)), reasons, guards };
  }).filter((t) => t.cases.some((c) => c > 0));
  graphBreaks.sort((a, b) => b.cases[R - 1] - a.cases[R - 1] || (a.target < b.target ? -1 : 1));

  // Overview releases.
  const releases = [];
  let index1 = 1;
  for (let j = 0; j < R; j++) {
    const a = acc[j];
    let speed = null;
    if (j > 0 && a.nLog > 0) {
      const mean = a.sumLog / a.nLog;
      const sd = a.nLog > 1 ? Math.sqrt(Math.max(0, (a.sumLog2 - a.nLog * mean * mean) / (a.nLog - 1))) : 0;
      const half = 1.96 * sd / Math.sqrt(a.nLog);
      speed = { ratio: sig(Math.exp(mean), 5), lo: sig(Math.exp(mean - half), 5), hi: sig(Math.exp(mean + half), 5), n: a.nLog };
      index1 *= Math.exp(mean);
    }
    const gb = graphBreaks.reduce((s, t) => s + t.breaks[j], 0);
    const rel = rels[j];
    releases.push({
      release: rel.release, run_id: rel.run_id + (spec.id === 'g0' ? 0 : 1000), started_at: rel.started_at,
      week: rel.week, backend_version: `${spec.backend} ${spec.backendVersion(j)}`
        + (hostile && j === R - 1 ? ` ${HOSTILE_IMG}` : ''),
      cases: a.cases, counts: a.counts,
      pass_rate: a.cases ? sig((a.counts.PASS || 0) / a.cases, 6) : null,
      fallback_rate: a.cases ? sig(a.fallback / a.cases, 6) : null,
      graph_breaks: gb, recompiles: Math.floor(gb / 2),
      speed, speed_index: sig(index1, 6),
      change_point: { speed: j === slowAt || j === fastAt, pass: j === dropAt || j === fixAt },
      regressions: j === 0 ? null : a.reg,
    });
  }

  // Weeks: a week's figures are its last release's.
  const weeks = [];
  for (const rel of releases) {
    const last = weeks[weeks.length - 1];
    const w = rels.find((x) => x.release === rel.release);
    const item = { week: rel.week, start: w.weekStart, release: rel.release, releases: 1,
      pass_rate: rel.pass_rate, fallback_rate: rel.fallback_rate, graph_breaks: rel.graph_breaks,
      speed_index: rel.speed_index, change_point: { ...rel.change_point } };
    if (last && last.week === rel.week) {
      item.releases = last.releases + 1;
      item.change_point = { speed: last.change_point.speed || rel.change_point.speed, pass: last.change_point.pass || rel.change_point.pass };
      weeks[weeks.length - 1] = item;
    } else weeks.push(item);
  }

  const group = {
    id: spec.id, backend: spec.backend, suite: spec.suite, metric: spec.metric, releases, weeks,
    latest: R >= 2 ? { release: rels[R - 1].release, baseline: rels[R - 2].release } : null,
    facets: {
      family: [...facets.family].sort(), dtype: [...facets.dtype].sort(),
      mode: [...facets.mode].sort(), status: [...facets.status].sort(),
    },
    cases: entries.length, case_files: fileNo,
  };

  writeData(root, `${spec.id}/cases/index`, { schema_version: 1, group: spec.id, per_file: PER_FILE, ...index });

  if (R >= 2) {
    const gateOrder = { accuracy: 0, speed: 1, coverage: 2 };
    regressions.sort((a, b) => gateOrder[a.gate] - gateOrder[b.gate] || (b.ratio || 0) - (a.ratio || 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const counts = { accuracy: 0, speed: 0, coverage: 0 };
    for (const x of regressions) counts[x.gate]++;
    const last = releases[R - 1];
    const newFallbacks = [];
    for (const [op, per] of fallbackOps) if (per[R - 1] > 0 && per[R - 2] === 0) newFallbacks.push({ op, cases: per[R - 1] });
    newFallbacks.sort((a, b) => b.cases - a.cases);
    writeData(root, `${spec.id}/latest`, {
      schema_version: 1, group: spec.id,
      baseline: { release: releases[R - 2].release, run_id: releases[R - 2].run_id },
      candidate: { release: last.release, run_id: last.run_id },
      geomean: last.speed, counts,
      regressions: regressions.slice(0, REGRESSION_CAP), regressions_total: regressions.length,
      missing: missing.slice(0, 1000), missing_total: missing.length, new_fallbacks: newFallbacks,
    });
  }

  // Breakdown.
  const by = {};
  for (const dim of ['family', 'dtype', 'mode']) {
    by[dim] = {};
    for (const v of [...dims[dim].keys()].sort()) {
      let idx = null;
      by[dim][v] = dims[dim].get(v).map((d) => {
        if (!d.cases) return null;
        if (idx === null) idx = 1;
        else if (d.nLog) idx *= Math.exp(d.sumLog / d.nLog);
        return { cases: d.cases, pass_rate: sig(d.pass / d.cases, 5), fallback_rate: sig(d.fallback / d.cases, 5), speed_index: sig(idx, 5) };
      });
    }
  }
  writeData(root, `${spec.id}/breakdown`, { schema_version: 1, group: spec.id, releases: rels.map((x) => x.release), by });

  const fops = [...fallbackOps].map(([op, cases]) => ({ op, cases }));
  fops.sort((a, b) => b.cases[R - 1] - a.cases[R - 1] || (a.op < b.op ? -1 : 1));
  writeData(root, `${spec.id}/coverage`, {
    schema_version: 1, group: spec.id, releases: rels.map((x) => x.release), fallback_ops: fops, graph_breaks: graphBreaks,
  });
  return group;
}

// ---------------------------------------------------------------------------------------------

function main() {
  const o = parseArgs(process.argv.slice(2));
  const root = path.resolve(o.out);
  fs.rmSync(path.join(root, 'data'), { recursive: true, force: true });
  fs.mkdirSync(path.join(root, 'data'), { recursive: true });

  // Releases every 3.5 days from 2026-01-05, of the form 2.<minor>.<patch>.
  const N = o.releases;
  const t0 = Date.UTC(2026, 0, 5, 1, 2, 3);
  const allReleases = [];
  for (let i = 0; i < N; i++) {
    const d = new Date(t0 + i * 3.5 * 86400000 + (i % 3) * 3600000);
    const w = isoWeek(d);
    allReleases.push({ release: `2.${Math.floor(i / 4)}.${i % 4}`, run_id: 10 + i * 3,
      started_at: d.toISOString().replace(/\.\d{3}Z$/, 'Z'), week: w.week, weekStart: w.start });
  }
  const specs = [
    { id: 'g0', backend: 'sim', suite: 'nightly', metric: 'sim', releases: N, cases: o.cases,
      backendVersion: (j) => `0.${3 + Math.floor(j / 10)}.${j % 10}` },
    { id: 'g1', backend: 'cpu', suite: 'smoke', metric: 'host', releases: Math.max(1, N - 4),
      cases: Math.max(60, Math.round(o.cases / 8)), backendVersion: () => 'torch 2.9.1' },
  ];
  const groups = specs.map((s, i) => buildGroup(s, allReleases, o.hostile && i === 0, root));
  const last = allReleases[N - 1];
  writeData(root, 'overview', {
    schema_version: 1,
    generated_at: new Date(Date.parse(last.started_at) + 86400000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    gauntlet_version: '0.4.0',
    db: o.hostile ? `results${HOSTILE_SCRIPT}.sqlite` : 'results.sqlite',
    since: null,
    groups,
  });
  const total = groups.reduce((s, g) => s + g.cases, 0);
  process.stdout.write(`sample_data: wrote ${path.join(root, 'data')} (${groups.length} groups, ${N} releases, ${total} cases${o.hostile ? ', hostile strings' : ''})\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
