// Module's dotted-name addressing (getSubmodule, getParameter, getBuffer) and loadStateDict's
// checks and copy. The Module passes its private tables in as functions, so that the class keeps
// its fields private and this file needs no access to them.
import { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import { ArgumentError, checksOf, describeValue } from '../../util/arguments.js';
import type { Module } from './module.js';

/** A module's registered submodules by name. */
type Children = (m: Module) => Map<string, Module>;

/** @internal The submodule at `path` below `root` (Module.getSubmodule); a missing step is a named error. */
export function resolvePath(
  root: Module,
  children: Children,
  method: string,
  target: string,
  path: string[],
): Module {
  if (typeof target !== 'string')
    throw new ArgumentError(`tailor: ${method}: target must be a dotted name string, got ${typeof target}`);
  if (target === '') return root;
  return path.reduce<Module>((at, item, i) => {
    const next = children(at).get(item);
    if (next) return next;
    const walked = path.slice(0, i).join('.');
    const has = [...children(at).keys()].map((k) => `'${k}'`).join(', ');
    throw new ArgumentError(
      `tailor: ${method}('${target}'): ${at.constructor.name}${walked ? ` at '${walked}'` : ''} has no submodule '${item}'${has ? ` (it has ${has})` : ''}`,
    );
  }, root);
}

/** @internal The parameter or buffer at a dotted path (Module.getParameter, getBuffer). */
export function lookUpTensor(
  root: Module,
  children: Children,
  method: string,
  target: string,
  what: string,
  table: (m: Module) => Map<string, Tensor | null>,
): Tensor {
  if (typeof target !== 'string' || target === '')
    throw new ArgumentError(
      `tailor: ${method}: target must be a dotted ${what} name such as 'fc.weight', got ${describeValue(target)}`,
    );
  const path = target.split('.');
  const name = path.pop()!;
  const owner = resolvePath(root, children, method, target, path);
  const t = table(owner).get(name);
  if (!t) {
    const where = path.length ? ` at '${path.join('.')}'` : '';
    const own = [...table(owner)].filter(([, v]) => v).map(([k]) => `'${k}'`);
    throw new ArgumentError(
      `tailor: ${method}('${target}'): ${owner.constructor.name}${where} has no ${what} '${name}'${t === null ? ` (it is registered as null)` : ''}${own.length ? ` (its ${what}s: ${own.join(', ')})` : ''}`,
    );
  }
  return t;
}

/** @internal Checks loadStateDict's `state` argument: an object of tensors. */
export function checkState(state: Record<string, Tensor>): void {
  const c = checksOf('loadStateDict');
  c.object(state, 'state');
  for (const [name, value] of Object.entries(state))
    if (!(value instanceof Tensor)) c.fail(`state['${name}']`, 'a Tensor', value);
}

/** @internal The error of a strict loadStateDict whose keys do not match. */
export function keysError(missing: string[], unexpected: string[]): Error {
  return new Error(
    `loadStateDict: ${missing.length ? `missing keys: ${missing.join(', ')}` : ''}${missing.length && unexpected.length ? '; ' : ''}${unexpected.length ? `unexpected keys: ${unexpected.join(', ')}` : ''}`,
  );
}

/** @internal Copies `source` into the module's tensor `target` (state key `name`), shapes checked. */
export function copyState(name: string, target: Tensor, source: Tensor): void {
  const a = target.shape.join('x');
  const b = source.shape.join('x');
  if (a !== b)
    throw new Error(`loadStateDict: '${name}' has shape [${b}] in the checkpoint but [${a}] in the model`);
  noGrad(() => target.copy_(source));
}

/** @internal Module.loadStateDict: `own` is the module's state dict. */
export function loadState(
  own: Record<string, Tensor>,
  state: Record<string, Tensor>,
  strict: boolean,
): { missing: string[]; unexpected: string[] } {
  checkState(state);
  const missing = Object.keys(own).filter((k) => !(k in state));
  const unexpected = Object.keys(state).filter((k) => !(k in own));
  if (strict && (missing.length > 0 || unexpected.length > 0)) throw keysError(missing, unexpected);
  for (const [name, target] of Object.entries(own)) {
    const source = state[name];
    if (source) copyState(name, target, source);
  }
  return { missing, unexpected };
}
