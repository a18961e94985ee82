// The handle every hook registration returns (modules' and tensors').

/** What registering a hook returns (torch.utils.hooks.RemovableHandle): `remove()` takes the hook off. */
export class RemovableHandle {
  #remove: (() => void) | null;
  /** @internal */
  constructor(
    /** The hook's number, unique in the process (increasing in registration order). */
    readonly id: number,
    remove: () => void,
  ) {
    this.#remove = remove;
  }
  /** Takes the hook off its module or tensor; calling it again does nothing. */
  remove(): void {
    const remove = this.#remove;
    this.#remove = null;
    remove?.();
  }
}

let nextId = 0;

/** @internal The next hook number (shared by module and tensor hooks, so ids are unique). */
export function nextHookId(): number {
  return nextId++;
}
