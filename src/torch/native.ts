// Placeholder replaced by the engine work (issue 2); kept so that the CLI compiles meanwhile.
export function engineInfo(): { torchVersion: string; threads: number } {
  throw new Error('the native addon is not built yet');
}
