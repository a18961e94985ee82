// Writes a run's HTML report if the report module is available (it renders results.json).
export async function writeRunReport(runDir: string): Promise<string | null> {
  try {
    const mod = (await import('../../report/index.js')) as { writeLongtailReport?: (dir: string) => string };
    return mod.writeLongtailReport ? mod.writeLongtailReport(runDir) : null;
  } catch (error) {
    console.error(`report: not written (${(error as Error).message})`);
    return null;
  }
}
