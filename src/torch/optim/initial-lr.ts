// A parameter group's rate when the first scheduler took it over (PyTorch's group['initial_lr'],
// set once): a second scheduler on the same optimizer (SequentialLR, ChainedScheduler) starts
// from it, not from the rate the first one's initial step wrote. Kept beside the groups, so the
// optimizer's own state and state dict are unchanged. Not part of the public surface.
const initialLrs = new WeakMap<object, number>();

/** The group's initial rate, recorded now if no scheduler did before (setdefault). */
export function initialLrOf(group: { lr: number }): number {
  if (!initialLrs.has(group)) initialLrs.set(group, group.lr);
  return initialLrs.get(group)!;
}

/** Records `lr` as the group's initial rate (OneCycleLR and CyclicLR define their own). */
export function setInitialLr(group: { lr: number }, lr: number): void {
  initialLrs.set(group, lr);
}

/** Whether a scheduler recorded the group's initial rate (PyTorch's `'initial_lr' in group`). */
export function hasInitialLr(group: { lr: number }): boolean {
  return initialLrs.has(group);
}
