#!/usr/bin/env node
// Copies the dashboard's page and assets into OUTDIR, in the layout `gauntlet dashboard` writes:
//
//   OUTDIR/index.html
//   OUTDIR/assets/app.js, style.css, uPlot.iife.min.js, uPlot.min.css
//
//   node dashboards/tools/assemble.mjs OUTDIR
//
// The data (OUTDIR/data/**) comes from `gauntlet dashboard` or from tools/sample_data.mjs; this
// leaves it alone. uPlot comes from node_modules (run `npm ci` in dashboards/ first).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

export const FILES = [
  ['site/index.html', 'index.html'],
  ['site/app.js', 'assets/app.js'],
  ['site/style.css', 'assets/style.css'],
  ['node_modules/uplot/dist/uPlot.iife.min.js', 'assets/uPlot.iife.min.js'],
  ['node_modules/uplot/dist/uPlot.min.css', 'assets/uPlot.min.css'],
];

function main() {
  const args = process.argv.slice(2);
  if (args.length !== 1 || args[0].startsWith('-')) {
    process.stderr.write('usage: node dashboards/tools/assemble.mjs OUTDIR\n');
    process.exit(2);
  }
  const out = path.resolve(args[0]);
  for (const [src, dst] of FILES) {
    const from = path.join(root, src);
    if (!fs.existsSync(from)) {
      const hint = src.startsWith('node_modules') ? ' (run `npm ci` in dashboards/ first)' : '';
      process.stderr.write(`assemble: ${path.relative(process.cwd(), from) || from} is missing${hint}\n`);
      process.exit(1);
    }
    const to = path.join(out, dst);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
  }
  if (!fs.existsSync(path.join(out, 'data', 'overview.js'))) {
    process.stderr.write(`assemble: note: ${path.join(out, 'data', 'overview.js')} does not exist yet; the page needs it\n`);
  }
  process.stdout.write(`assemble: wrote the site into ${out}\n`);
}

main();
