// The calls of the API fuzz targets (api-targets.ts): a namespace's functions and a class's
// public methods, found at run time, each call noted before it is made so that a crash or a hang
// can be traced to it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, type Pools, type Kind, type Torch } from './api-pools.js';

export type Fn = (...args: unknown[]) => unknown;
/** Things the input made that outlive its tidy() (modules, optimizers, distributions). */
export type Owned = { dispose(): void }[];

/** The functions of a namespace object, by name (classes left out unless `classes`). */
export function functionsOf(ns: object, classes = false): [string, Fn][] {
  return Object.entries(ns)
    .filter(([, v]) => typeof v === 'function' && classes === /^[A-Z]/.test((v as Fn).name ?? ''))
    .map(([k, v]) => [k, v as Fn]);
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

/** Calls fn with args after noting the call (so that a crash or hang can be traced to it). */
export function invoke(
  torch: Torch,
  note: (label: string) => void,
  label: string,
  fn: Fn,
  self: unknown,
  args: unknown[],
): unknown {
  note(`${label}(${args.map((a) => describe(a, torch)).join(', ')})`);
  return fn.apply(self, args);
}

/** Calls a namespace's function: arity from fn.length, arguments mostly tensors. */
export function callFrom(
  torch: Torch,
  p: Pools,
  note: (l: string) => void,
  area: string,
  fns: [string, Fn][],
) {
  const [name, fn] = p.pick(fns);
  const kinds: Kind[] = ['tensor', p.pick<Kind>(['tensor', 'dim', 'int', 'any']), 'any', 'options'];
  return invoke(
    torch,
    note,
    `${area}.${name}`,
    fn,
    undefined,
    p.args(kinds, Math.max(1, fn.length) + p.rng.int(2)),
  );
}

/** Constructs a class of the area with hostile arguments and keeps it for disposal. */
export function construct(
  torch: Torch,
  p: Pools,
  note: (l: string) => void,
  owned: Owned,
  label: string,
  C: Fn,
  args: unknown[],
) {
  note(`new ${label}(${args.map((a) => describe(a, torch)).join(', ')})`);
  const made = Reflect.construct(C, args) as { dispose?: () => void };
  if (typeof made.dispose === 'function') owned.push(made as { dispose(): void });
  return made;
}

/**
 * The protected and private methods of tailor's classes (read from their TypeScript source, which
 * alone knows them): not API, so not fuzzed.
 */
const NOT_PUBLIC = ((): Set<string> => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'torch');
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.ts'))
        for (const m of readFileSync(join(dir, entry.name), 'utf8').matchAll(
          /^\s+(?:protected|private)\s+(?:static\s+)?(?:readonly\s+)?\*?\s*(\w+)\s*[(<]/gm,
        ))
          names.add(m[1]!);
    }
  };
  walk(root);
  return names;
})();

/** The public methods of an object's class chain (not the getters), by name. */
export function methodsOf(obj: object, skip: RegExp): string[] {
  const names = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(obj);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  )
    for (const k of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, k)!;
      if (k !== 'constructor' && typeof d.value === 'function' && !skip.test(k) && !NOT_PUBLIC.has(k))
        names.add(k);
    }
  return [...names];
}

/** Calls one method of obj (chosen with the pools) with hostile arguments. */
export function callMethod(
  torch: Torch,
  p: Pools,
  note: (l: string) => void,
  label: string,
  obj: object,
  skip: RegExp,
) {
  const name = p.pick(methodsOf(obj, skip));
  const fn = (obj as Record<string, Fn>)[name]!;
  return invoke(torch, note, `${label}.${name}`, fn, obj, p.args(['any', 'any', 'options'], fn.length));
}
