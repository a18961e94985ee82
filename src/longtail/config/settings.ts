// Config fields set from the command line (`tailor train --set arch.args.num_experts=7`), as the
// reference trainers' flags set them (BalPoE's `--num_experts 7 --tau_list limits`, SADE's
// `--lr`, `--bs`): any field, by its dotted path, applied to the parsed JSON before the config is
// checked, so a wrong path or value is named by the same rules as one written in the file.
import { ConfigError } from './schema.js';

/** At most this many settings on one command line, each at most this long. */
const MAX_SETTINGS = 256;
const MAX_LENGTH = 64 * 1024;
const MAX_DEPTH = 16;
/** Keys that would reach an object's prototype instead of a field. */
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** One `path=value` setting: the field's path and its value. */
export interface ConfigSetting {
  path: string[];
  value: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses `path=value`: the path is dotted (`optimizer.args.lr`; an integer segment indexes a
 * list), the value is JSON when it reads as JSON (`0.1`, `true`, `[0, 1, 2]`, `null`) and the
 * text itself otherwise (`limits`, `runs/a`). Throws ConfigError naming the setting.
 */
export function parseSetting(text: string): ConfigSetting {
  const shown = text.length > 80 ? `${text.slice(0, 80)}...` : text;
  const fail = (why: string): never => {
    throw new ConfigError('--set', '', `'${shown}': ${why}`);
  };
  if (text.length > MAX_LENGTH) fail(`is longer than ${MAX_LENGTH} characters`);
  const eq = text.indexOf('=');
  if (eq < 0) fail('needs the form PATH=VALUE, e.g. --set optimizer.args.lr=0.05');
  const path = text.slice(0, eq).trim().split('.');
  if (path.some((p) => p === '')) fail('has an empty field name in its path (write a.b.c)');
  if (path.length > MAX_DEPTH) fail(`nests deeper than ${MAX_DEPTH} fields`);
  const bad = path.find((p) => FORBIDDEN.has(p));
  if (bad !== undefined) fail(`'${bad}' is not a config field`);
  const raw = text.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // plain text: a name, a path, BalPoE's 'limits'
  }
  return { path, value };
}

/**
 * The config JSON with each setting applied in order (a copy; `raw` is left as it was). Missing
 * objects on the way are created; a path through a value that is not an object or a list is a
 * named error, as is an index beyond a list's end.
 */
export function applySettings(raw: unknown, settings: readonly string[]): unknown {
  if (settings.length === 0) return raw;
  if (settings.length > MAX_SETTINGS)
    throw new ConfigError('--set', '', `is given ${settings.length} times; at most ${MAX_SETTINGS}`);
  const root = structuredClone(raw);
  if (!isRecord(root)) return root; // the config check names a config that is not an object
  for (const text of settings) {
    const { path, value } = parseSetting(text);
    let node: unknown = root;
    for (let i = 0; i < path.length; i++) {
      const key = path[i]!;
      const last = i === path.length - 1;
      const where = path.slice(0, i + 1).join('.');
      if (Array.isArray(node)) {
        const index = /^\d+$/.test(key) ? Number(key) : NaN;
        if (!(index <= node.length))
          throw new ConfigError(
            '--set',
            where,
            `indexes a list of ${node.length} values: use 0..${node.length - 1}, or ${node.length} to append`,
          );
        if (last) node[index] = value;
        else node = node[index] ??= {};
      } else if (isRecord(node)) {
        if (last) node[key] = value;
        else node = Object.hasOwn(node, key) ? node[key] : (node[key] = {});
      } else {
        throw new ConfigError(
          '--set',
          path.slice(0, i).join('.'),
          `is ${JSON.stringify(node)}, not an object, so it has no field '${key}'`,
        );
      }
    }
  }
  return root;
}
