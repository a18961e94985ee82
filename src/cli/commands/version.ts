import { readFileSync } from 'node:fs';

export async function run(_argv: string[]): Promise<number> {
  const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  console.log(`tailor ${pkg.version}`);
  try {
    const { engineInfo } = await import('../../torch/native.js');
    const info = engineInfo();
    console.log(`libtorch ${info.torchVersion}, ${info.threads} threads`);
  } catch (error) {
    console.log(`libtorch engine not available: ${(error as Error).message}`);
  }
  return 0;
}
