// Attaches Tensor members written outside tensor.ts (tensor-autograd.ts, tensor-views.ts,
// tensor-convert.ts) to its prototype, so that tensor.ts stays the core class and each group of
// members lives in a file of its own; each file declares its members on Tensor by module
// augmentation.
import { Tensor } from './tensor.js';

/**
 * @internal Defines the methods and accessors of `members` on Tensor.prototype, non-enumerable as
 * a class's own, refusing a name the class or another file already defines.
 */
export function attachTensorMembers(file: string, members: object & ThisType<Tensor>): void {
  for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(members))) {
    if (Object.prototype.hasOwnProperty.call(Tensor.prototype, name))
      throw new Error(`tailor: Tensor.${name} is already defined; ${file} must not replace it`);
    Object.defineProperty(Tensor.prototype, name, { ...descriptor, enumerable: false });
  }
}

/**
 * @internal Attaches torch.* functions as Tensor methods: `x.name(...args)` calls
 * `functions[name](x, ...args)`. Non-enumerable, and a name already defined is refused at load.
 */
export function attachTensorFunctions(
  file: string,
  functions: Record<string, (self: Tensor, ...args: never[]) => unknown>,
): void {
  attachTensorMembers(
    file,
    Object.fromEntries(
      Object.entries(functions).map(([name, fn]) => [
        name,
        function (this: Tensor, ...rest: never[]): unknown {
          return fn(this, ...rest);
        },
      ]),
    ),
  );
}
