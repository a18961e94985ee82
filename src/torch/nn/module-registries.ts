// The private tables of a Module that the reparametrisations (weight-norms.ts, parametrize.ts)
// edit, as PyTorch's delete a parameter and register new ones under the module. One typed view,
// checked, so that a change to Module's fields fails here by name rather than silently.
import type { Tensor } from '../tensor.js';
import type { Module } from './module.js';

/** @internal Module's registries and registration methods, as the reparametrisations use them. */
export interface ModuleRegistries {
  parametersByName: Map<string, Tensor | null>;
  buffersByName: Map<string, Tensor | null>;
  modulesByName: Map<string, Module>;
  registerParameter(name: string, value: Tensor): Tensor;
  registerBuffer(name: string, value: Tensor): Tensor;
  registerModule(name: string, value: Module): Module;
}

/** @internal The registries of `module`; throws if Module no longer keeps them under these names. */
export function moduleRegistries(module: Module): ModuleRegistries {
  const r = module as unknown as ModuleRegistries;
  if (
    !(r.parametersByName instanceof Map) ||
    !(r.buffersByName instanceof Map) ||
    !(r.modulesByName instanceof Map)
  )
    throw new Error(
      'tailor: Module no longer keeps its tensors in parametersByName / buffersByName / modulesByName; update module-registries.ts',
    );
  return r;
}

/**
 * @internal Makes `module.dispose()` also free the tensors of `computed` (the weights a
 * reparametrisation computes, which are no parameters of the module); returns the function that
 * gives the module its own dispose back.
 */
export function disposeAlso(module: Module, computed: Map<string, Tensor>): () => void {
  const own = Object.getOwnPropertyDescriptor(module, 'dispose');
  const dispose = module.dispose;
  Object.defineProperty(module, 'dispose', {
    configurable: true,
    writable: true,
    value: function (this: Module) {
      for (const t of computed.values()) t.dispose();
      computed.clear();
      dispose.call(this);
    },
  });
  return () => {
    if (own) Object.defineProperty(module, 'dispose', own);
    else delete (module as unknown as Record<string, unknown>).dispose;
  };
}
