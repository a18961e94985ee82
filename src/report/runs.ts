// Discovery of run directories under a runs root: every directory (symbolic links are not
// followed) holding a results.json, an `nmr train` run's history.json and best.json, or an
// `nmr ablate` output's ablation.json, named by its path relative to the root.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { detectRunKind, readResults } from './index.js';
import { isNmrTrainRun } from './nmr-train.js';
import { isNmrAblationDir } from './nmr-ablation.js';
import type { RunKind } from './types.js';

export interface RunEntry {
  id: string;
  dir: string;
  kind: RunKind | null;
  title: string;
  error?: string;
}

const MAX_DEPTH = 4;
const MAX_RUNS = 2000;

function describe(results: unknown): string {
  const r = results as Record<string, unknown>;
  if (r.kind === 'longtail') return `${String(r.name)} — ${String(r.method)}`;
  if (r.format === 'tailor-gmm')
    return `${r.bayesian ? 'variational GMM' : 'GMM'} K = ${String(r.nComponents)} (${String(r.covarianceType)})`;
  if (typeof r.model === 'string') return `${r.model}, K = ${String(r.K)}`;
  if (typeof r.bestK === 'number') return `subgroup selection, best K = ${r.bestK}`;
  return '';
}

export function listRuns(root: string): RunEntry[] {
  const out: RunEntry[] = [];
  const walk = (dir: string, rel: string[], depth: number): void => {
    if (out.length >= MAX_RUNS) return;
    if (rel.length > 0 && isNmrTrainRun(dir)) {
      out.push({ id: rel.join('/'), dir, kind: 'nmr-train', title: 'NMR denoiser training' });
    } else if (rel.length > 0 && isNmrAblationDir(dir)) {
      out.push({ id: rel.join('/'), dir, kind: 'nmr-ablation', title: 'NMR training ablations' });
    } else if (rel.length > 0 && existsSync(join(dir, 'results.json'))) {
      const id = rel.join('/');
      try {
        const results = readResults(dir);
        const kind = detectRunKind(results);
        out.push({ id, dir, kind, title: describe(results) });
      } catch (error) {
        out.push({ id, dir, kind: null, title: '', error: (error as Error).message });
      }
    }
    if (depth >= MAX_DEPTH) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      // Dirent.isDirectory() is false for symbolic links, so links out of the root are never walked.
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
        walk(join(dir, e.name), [...rel, e.name], depth + 1);
    }
  };
  walk(root, [], 0);
  return out;
}
