// The Tensor members of autograd (x.requiresGrad_(), x.grad, x.backward(), x.registerHook(...),
// x.retainGrad()): declared on Tensor by module augmentation and attached to its prototype
// (tensor-attach.ts) when the package's index loads. They run through autograd-hooks.ts, which
// imports tensor.ts: living here, they keep tensor.ts free of that import.
import { Tensor } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { describeValue, ArgumentError } from '../util/arguments.js';
import { runBackward, registerTensorHook, type GradHook } from './autograd-hooks.js';
import type { RemovableHandle } from './hook-handle.js';
import { attachTensorMembers } from './tensor-attach.js';

declare module './tensor.js' {
  interface Tensor {
    get requiresGrad(): boolean;
    /** Sets requires_grad in place (leaf tensors); returns this. */
    requiresGrad_(value?: boolean): this;
    get isLeaf(): boolean;
    get gradFn(): string | null;
    /** The accumulated gradient (a new handle to it, owned by the caller/scope), or null. */
    get grad(): Tensor | null;
    set grad(value: Tensor | null);
    /** Computes the gradients of this tensor (a scalar unless `gradient` is given) with respect to the leaves that require grad, accumulating into their `grad` (torch.Tensor.backward). */
    backward(
      gradient?: Tensor,
      options?: {
        retainGraph?: boolean;
        createGraph?: boolean;
      },
    ): void;
    /**
     * Adds a hook called with this tensor's gradient each time a backward (or autograd.grad)
     * computes it: for a leaf before it is added to `grad`, for a tensor computed from others
     * once with the total over all its uses, before it goes on into the graph behind
     * (torch.Tensor.register_hook). A returned tensor of the same shape replaces the gradient;
     * undefined keeps it. The hook runs inside libtorch's engine, with grad mode on only under
     * `createGraph`. The gradient is freed after the hook returns: keep a clone to hold it.
     * `remove()` on the handle takes the hook off.
     */
    registerHook(hook: GradHook): RemovableHandle;
    /** Replaces the data (like `p.data = t` in PyTorch), keeping this handle and its grad state. */
    setData(source: Tensor): void;
    /**
     * Keeps this non-leaf tensor's gradient in `grad` when a backward computes it, as leaves keep
     * theirs (torch.Tensor.retain_grad); nothing changes for a leaf. The gradient adds up over
     * backwards (with `retainGraph`), and over everything one backward sends through it, module
     * backward hooks included: a tensor before a hooked module gets the gradient its hooks
     * returned; a hooked module's output, the gradient that reached it (before its hooks). The
     * tensor must require grad.
     */
    retainGrad(): void;
    /** Whether `retainGrad()` was called on this non-leaf tensor (false for leaves), as torch.Tensor.retains_grad. */
    get retainsGrad(): boolean;
  }
}

attachTensorMembers('tensor-autograd.ts', {
  get requiresGrad(): boolean {
    return native.requiresGrad(this.handle);
  },
  requiresGrad_(value = true): Tensor {
    native.setRequiresGrad(this.handle, value);
    return this;
  },
  get isLeaf(): boolean {
    return native.isLeaf(this.handle);
  },
  get gradFn(): string | null {
    return native.gradFnName(this.handle);
  },
  get grad(): Tensor | null {
    const g = native.grad(this.handle);
    return g === null ? null : new Tensor(g);
  },
  set grad(value: Tensor | null) {
    native.setGrad(this.handle, value === null ? null : value.handle);
  },
  backward(gradient?: Tensor, options: { retainGraph?: boolean; createGraph?: boolean } = {}): void {
    runBackward(this, gradient, options.retainGraph ?? false, options.createGraph ?? false);
  },
  registerHook(hook: GradHook): RemovableHandle {
    return registerTensorHook(this, hook);
  },
  setData(source: Tensor): void {
    if (!(source instanceof Tensor))
      throw new TypeError(`Tensor.setData: source must be a Tensor, got ${describeValue(source)}`);
    native.setData(this.handle, source.handle);
  },
  retainGrad(): void {
    if (!this.requiresGrad)
      throw new ArgumentError(
        'tailor: Tensor.retainGrad: the tensor does not require grad, so no gradient reaches it; call requiresGrad_() on the leaf it is computed from, or retain the grad of a tensor computed from one',
      );
    aten.retain_grad(this);
  },
  get retainsGrad(): boolean {
    return aten.retains_grad(this);
  },
});
