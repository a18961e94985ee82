// State-dict hooks of a Module (PyTorch 2.x's register_state_dict_pre_hook,
// register_state_dict_post_hook, register_load_state_dict_pre_hook and
// register_load_state_dict_post_hook). A module tree without them takes Module's flat stateDict
// and loadStateDict; with one anywhere, both walk the tree module by module as PyTorch's
// state_dict and load_state_dict do, calling each module's hooks where PyTorch calls them.
import type { Module } from './module.js';
import { Tensor } from '../tensor.js';
import { ArgumentError } from '../../util/arguments.js';
import { RemovableHandle, nextHookId } from '../hook-handle.js';
import { checkState, copyState, keysError } from './module-state.js';

/**
 * Runs before a module's part of the state dict is collected (PyTorch 2.x's state-dict pre-hook),
 * with the module's key prefix (`'layer1.0.'`; `''` for the module stateDict was called on).
 */
export type StateDictPreHook<M extends Module = Module> = (module: M, prefix: string) => void;

/**
 * Runs after a module's part of the state dict (its tensors and its submodules') is collected
 * (PyTorch's state-dict post-hook): it may change `stateDict` in place (add, rename or drop keys)
 * and must return `undefined`.
 */
export type StateDictPostHook<M extends Module = Module> = (
  module: M,
  stateDict: Record<string, Tensor>,
  prefix: string,
) => void;

/**
 * Runs before a module's tensors are loaded (PyTorch's load-state-dict pre-hook), with the
 * entries under its prefix: it may change `stateDict` in place (rename keys of an old checkpoint,
 * convert tensors: the caller's object is not touched), which this module and its submodules then
 * load. `missingKeys` and `unexpectedKeys` are the keys found so far (the modules loaded before).
 */
export type LoadStateDictPreHook<M extends Module = Module> = (
  module: M,
  stateDict: Record<string, Tensor>,
  prefix: string,
  strict: boolean,
  missingKeys: string[],
  unexpectedKeys: string[],
) => void;

/**
 * Runs after a module and its submodules are loaded (PyTorch's load-state-dict post-hook), with
 * the incompatible keys found so far: it may change the two lists in place (drop a key it
 * tolerates, so that a strict load passes, or add one) and must return `undefined`.
 */
export type LoadStateDictPostHook<M extends Module = Module> = (
  module: M,
  incompatibleKeys: { missing: string[]; unexpected: string[] },
) => void;

/** @internal The state-dict hook kinds and their registrations (for messages). */
export const STATE_METHODS = {
  save: 'registerStateDictPreHook',
  saved: 'registerStateDictPostHook',
  load: 'registerLoadStateDictPreHook',
  loaded: 'registerLoadStateDictPostHook',
} as const;

type Kind = keyof typeof STATE_METHODS;
type AnyHook = StateDictPreHook | StateDictPostHook | LoadStateDictPreHook | LoadStateDictPostHook;
type StateHooks = Record<Kind, Map<number, AnyHook>>;

const hooksOf = new WeakMap<Module, StateHooks>();

/** @internal Adds a state-dict hook of `kind` to `module` (Module's register*StateDict*Hook). */
export function addStateHook(module: Module, kind: Kind, hook: AnyHook): RemovableHandle {
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: ${STATE_METHODS[kind]}: hook must be a function, got ${typeof hook}`);
  let hooks = hooksOf.get(module);
  if (!hooks) {
    hooks = { save: new Map(), saved: new Map(), load: new Map(), loaded: new Map() };
    hooksOf.set(module, hooks);
  }
  const map = hooks[kind];
  const id = nextHookId();
  map.set(id, hook);
  return new RemovableHandle(id, () => map.delete(id));
}

/** @internal Whether a module of the tree `modules` has a hook of one of `kinds`. */
export function haveStateHooks(modules: Iterable<Module>, kinds: Kind[]): boolean {
  for (const m of modules) {
    const hooks = hooksOf.get(m);
    if (hooks && kinds.some((k) => hooks[k].size > 0)) return true;
  }
  return false;
}

/** The hooks of `kind` on `module`, copied (a hook that removes itself changes the next call). */
function hooks<T extends AnyHook>(module: Module, kind: Kind): T[] {
  return [...(hooksOf.get(module)?.[kind].values() ?? [])] as T[];
}

function noResult(kind: Kind, result: unknown, remedy: string): void {
  if (result !== undefined)
    throw new ArgumentError(
      `tailor: ${STATE_METHODS[kind]}: the hook must return undefined (${remedy}), got ${typeof result}`,
    );
}

/** @internal One module's state in a tree walk: its own tensors (state dict entries) and children. */
export interface StateTree {
  /** The module's parameters and persistent buffers that are not null, by name. */
  own(module: Module): [string, Tensor][];
  /** The module's registered submodules by name (a shared one under each of its names). */
  children(module: Module): Map<string, Module>;
}

/**
 * @internal Module.stateDict with hooks, as PyTorch's state_dict: per module, its pre-hooks, its
 * tensors, its submodules, its post-hooks. `order` is the keys in the order of the flat state dict,
 * which the result follows (keys a hook added come last).
 */
export function stateDictWithHooks(
  root: Module,
  tree: StateTree,
  order: () => string[],
): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  const save = (module: Module, prefix: string): void => {
    for (const hook of hooks<StateDictPreHook>(module, 'save'))
      noResult('save', hook(module, prefix), 'it runs before the state dict is collected');
    for (const [name, t] of tree.own(module)) out[prefix + name] = t;
    for (const [name, child] of tree.children(module)) save(child, `${prefix}${name}.`);
    for (const hook of hooks<StateDictPostHook>(module, 'saved'))
      noResult('saved', hook(module, out, prefix), 'change the state dict in place');
  };
  save(root, '');
  const ordered: Record<string, Tensor> = {};
  for (const key of order()) if (key in out) ordered[key] = out[key]!;
  return Object.assign(ordered, out);
}

/**
 * @internal Module.loadStateDict with hooks, as PyTorch's load_state_dict: per module, its
 * pre-hooks, its tensors copied, its submodules (each given the entries under its prefix), its
 * post-hooks; the strict check comes last, after the matching tensors are copied.
 */
export function loadStateWithHooks(
  root: Module,
  tree: StateTree,
  state: Record<string, Tensor>,
  strict: boolean,
): { missing: string[]; unexpected: string[] } {
  checkState(state);
  const missing: string[] = [];
  const unexpected: string[] = [];
  const load = (module: Module, local: Record<string, Tensor>, prefix: string): void => {
    for (const hook of hooks<LoadStateDictPreHook>(module, 'load'))
      noResult(
        'load',
        hook(module, local, prefix, strict, missing, unexpected),
        'change the state dict in place',
      );
    const own = tree.own(module);
    for (const [name, target] of own) {
      const key = prefix + name;
      const source = local[key];
      if (source === undefined) missing.push(key);
      else if (!(source instanceof Tensor))
        throw new ArgumentError(
          `tailor: loadStateDict: a load-state-dict pre-hook put ${typeof source} under '${key}'; put a Tensor`,
        );
      else copyState(key, target, source);
    }
    const children = tree.children(module);
    const names = new Set(own.map(([name]) => name));
    for (const key of Object.keys(local)) {
      if (!key.startsWith(prefix)) continue;
      const first = key.slice(prefix.length).split('.')[0]!;
      if (!names.has(first) && !children.has(first)) unexpected.push(key);
    }
    for (const [name, child] of children) {
      const childPrefix = `${prefix}${name}.`;
      load(
        child,
        Object.fromEntries(Object.entries(local).filter(([k]) => k.startsWith(childPrefix))),
        childPrefix,
      );
    }
    const incompatible = { missing, unexpected };
    for (const hook of hooks<LoadStateDictPostHook>(module, 'loaded'))
      noResult(
        'loaded',
        hook(module, incompatible),
        'change incompatibleKeys.missing and .unexpected in place',
      );
  };
  load(root, { ...state }, '');
  if (strict && (missing.length > 0 || unexpected.length > 0)) throw keysError(missing, unexpected);
  return { missing, unexpected };
}
