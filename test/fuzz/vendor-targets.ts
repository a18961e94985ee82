// Fuzz targets for the vendor folders beyond TopSpin: VnmrJ (fid, procpar) and Magritek Spinsolve
// (data.1d, acqu.par), each read through readNmr as the commands read them.
import { readNmr } from '../../src/nmr/io/load.js';
import { ACQU_PAR, REFFRQ, SFRQ, SW, fidFile, line, oneD, param } from '../nmr/vendor-fixtures.js';
import { text, type Files } from './seeds.js';
import type { FuzzTarget } from './targets.js';

function varianFiles(type: 'float32' | 'int32' | 'int16', blocks: number): Files {
  const traces = Array.from({ length: blocks }, (_, b) => [line(48, 300 * (b + 1), 1000, true)]);
  const procpar =
    param('sw', [SW]) +
    param('sfrq', [SFRQ]) +
    param('reffrq', [REFFRQ]) +
    param('tn', ['H1']) +
    param('lb', [0.5]) +
    param('nt', [1, 4, 16].slice(0, blocks)) +
    param('comment', ['two "quoted" words', 'second line']) +
    // VnmrJ's own processing: the phases and the FID shift the reader applies.
    (blocks === 3 ? param('rp', [12.5]) + param('lp', [-40]) + param('lsfid', [2]) : '');
  return { 'exp.fid/fid': new Uint8Array(fidFile(traces, type)), 'exp.fid/procpar': text(procpar) };
}

function spinsolveFiles(): Files {
  const trace = line(48, 250, 1000);
  const x = trace.re.map((_, i) => i / SW);
  return {
    'exp/data.1d': new Uint8Array(oneD(x, trace)),
    'exp/acqu.par': text(ACQU_PAR(SW / 1000, 80.4875791072845, -2600)),
  };
}

export function vendorTargets(): FuzzTarget[] {
  return [
    ...(['fid', 'procpar'] as const).map((file): FuzzTarget => ({
      name: `vnmrj ${file}`,
      native: false,
      kind: file === 'fid' ? 'binary' : 'text',
      seeds: async () => [varianFiles('float32', 1), varianFiles('int32', 3), varianFiles('int16', 2)],
      mutable: [`exp.fid/${file}`],
      dictionary: [
        '\x7f\xff\xff\xff',
        '\x00\x00\x00\x00',
        '\xff\xff\xff\xff',
        'ni 7 1 1e+09 1 1 2 1 2 1 64\n1 128\n0 \n',
        'sw 1 1 1e+06 0 0 2 1 11 1 64\n1 -5 \n0 \n',
        'lsfid 7 1 64000 -64000 1 3 1 0 1 64\n1 99999999 \n0 \n',
        'lsfid 7 1 64000 -64000 1 3 1 0 1 64\n1 -47.5 \n0 \n',
        'rp 1 1 3600 -3600 0 3 1 0 1 64\n1 -1e+300 \n0 \n',
        '99999999999 ',
        '"',
        '\\',
      ],
      run: (dir) => readNmr(`${dir}/exp.fid`),
    })),
    ...(['data.1d', 'acqu.par'] as const).map((file): FuzzTarget => ({
      name: `spinsolve ${file}`,
      native: false,
      kind: file === 'data.1d' ? 'binary' : 'text',
      seeds: async () => [spinsolveFiles()],
      mutable: [`exp/${file}`],
      dictionary: [
        'SORPATAD1.1V',
        '\xf8\x01\x00\x00',
        '\xff\xff\xff\x7f',
        'bandwidth = 0\n',
        'b1Freq = -1\n',
        'lowestFrequency = NaN\n',
        '= = =\n',
      ],
      run: (dir) => readNmr(`${dir}/exp`),
    })),
  ];
}
