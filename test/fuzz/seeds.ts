// Seed files of the fuzz campaign: small, valid files in the real layouts (idx, CIFAR pickles and
// records, Bruker folders, JCAMP-DX in AFFN and DIFDUP, NMRPipe, CSVs, run results), built in code
// so that the campaign needs no data set.
import { gzipSync } from 'node:zlib';
import { encodeDifDup } from '../../src/nmr/io/asdf.js';
import { idxBytes, makeImages } from '../longtail/data-fixtures.js';

export type Files = Record<string, Uint8Array>;

export const text = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
export const json = (v: unknown): Uint8Array => text(JSON.stringify(v, null, 2));

// ---------------------------------------------------------------- long-tail data
export function fashionFiles(gz: boolean): Files {
  const n = 3;
  const images = idxBytes([n, 28, 28], makeImages(n, 784));
  const labels = idxBytes([n], Uint8Array.from([0, 9, 4]));
  const ext = gz ? '.gz' : '';
  const enc = (b: Uint8Array): Uint8Array => (gz ? new Uint8Array(gzipSync(b)) : b);
  return {
    [`t10k-images-idx3-ubyte${ext}`]: enc(images),
    [`t10k-labels-idx1-ubyte${ext}`]: enc(labels),
  };
}

/** The idx content before compression, so that mutations reach the parser behind gunzip. */
export function fashionRaw(): Files {
  const raw = fashionFiles(false);
  return {
    't10k-images-idx3-ubyte.gz': raw['t10k-images-idx3-ubyte']!,
    't10k-labels-idx1-ubyte.gz': raw['t10k-labels-idx1-ubyte']!,
  };
}

export const split3 = { images: makeImages(3, 3072), labels: [1, 0, 7] };

// ---------------------------------------------------------------- NMR
export function spectrum(n: number): {
  real: Float64Array;
  ppmFirst: number;
  ppmLast: number;
  refMHz: number;
} {
  const real = new Float64Array(n);
  for (let i = 0; i < n; i++) real[i] = 1000 * Math.exp(-(((i - n / 3) / 3) ** 2)) + ((i * 37) % 11) - 5;
  return { real, ppmFirst: 10, ppmLast: 0, refMHz: 400.13 };
}

export function jcampFid(): string {
  const n = 64;
  const re: number[] = [];
  const im: number[] = [];
  for (let i = 0; i < n; i++) {
    re.push(Math.round(20000 * Math.exp(-i / 20) * Math.cos(i / 3)));
    im.push(Math.round(20000 * Math.exp(-i / 20) * Math.sin(i / 3)));
  }
  const page = (sym: string, y: number[]): string[] => [
    `##PAGE= N=${sym === 'R' ? 1 : 2}`,
    `##DATA TABLE= (X++(${sym}..${sym})), XYDATA`,
    ...encodeDifDup(y, (i) => String(i)),
  ];
  return [
    '##TITLE= fuzz fid',
    '##JCAMP-DX= 6.00',
    '##DATA TYPE= NMR FID',
    '##DATA CLASS= NTUPLES',
    '##.OBSERVE FREQUENCY= 400.13',
    '##.OBSERVE NUCLEUS= ^1H',
    '##$SW_h= 8000',
    '##$SFO1= 400.131',
    '##$BF1= 400.13',
    '##$GRPDLY= 67.98',
    '##$PHC0= 12.5',
    '##NTUPLES= NMR FID',
    '##VAR_NAME= TIME, FID/REAL, FID/IMAG, PAGE NUMBER',
    '##SYMBOL= X, R, I, N',
    `##VAR_DIM= ${n}, ${n}, ${n}, 2`,
    '##UNITS= SECONDS, ARBITRARY UNITS, ARBITRARY UNITS,',
    `##FIRST= 0, ${re[0]}, ${im[0]}, 1`,
    `##LAST= ${(n - 1) / 8000}, ${re[n - 1]}, ${im[n - 1]}, 2`,
    '##FACTOR= 0.000125, 1, 1, 1',
    ...page('R', re),
    ...page('I', im),
    '##END NTUPLES= NMR FID',
    '##END=',
  ].join('\n');
}

export function brukerFiles(): Files {
  const td = 64;
  const fid = Buffer.alloc(td * 4);
  for (let i = 0; i < td; i++) fid.writeInt32LE(Math.round(1e5 * Math.exp(-i / 30) * Math.cos(i)), i * 4);
  const si = 32;
  const r1 = Buffer.alloc(si * 4);
  const i1 = Buffer.alloc(si * 4);
  for (let i = 0; i < si; i++) {
    r1.writeInt32LE(Math.round(5e4 * Math.exp(-(((i - 10) / 2) ** 2))), i * 4);
    i1.writeInt32LE(i * 100 - 1600, i * 4);
  }
  const acqus = [
    '##TITLE= Parameter file, TOPSPIN',
    '##JCAMPDX= 5.0',
    '##$BF1= 400.13',
    '##$BYTORDA= 0',
    '##$DECIM= 16',
    '##$DIGMOD= 1',
    '##$DSPFVS= 20',
    '##$DTYPA= 0',
    '##$GRPDLY= 67.9842376708984',
    '##$NS= 8',
    '##$NUC1= <1H>',
    '##$SFO1= 400.132',
    '##$SW_h= 8012.82',
    `##$TD= ${td}`,
    '##$VD= 0.1',
    '##$VDLIST= (0..3)',
    '0.1 0.2 0.3 0.4',
    '##END=',
  ].join('\n');
  const procs = [
    '##TITLE= Parameter file, TOPSPIN',
    '##$BYTORDP= 0',
    '##$DTYPP= 0',
    '##$LB= 0.3',
    '##$NC_proc= -2',
    '##$OFFSET= 12.5',
    '##$PHC0= 21.3',
    '##$PHC1= -3.5',
    '##$SF= 400.13',
    `##$SI= ${si}`,
    '##$SW_p= 8012.82',
    '##END=',
  ].join('\n');
  return {
    acqus: text(acqus),
    fid: new Uint8Array(fid),
    'pdata/1/procs': text(procs),
    'pdata/1/1r': new Uint8Array(r1),
    'pdata/1/1i': new Uint8Array(i1),
  };
}

export function pipeFile(n: number, complex: boolean, ft: boolean): Uint8Array {
  const buf = new ArrayBuffer(2048 + 4 * n * (complex ? 2 : 1));
  const v = new DataView(buf);
  const set = (w: number, x: number): void => v.setFloat32(w * 4, x, true);
  set(2, 2.345);
  set(9, 1);
  set(99, n);
  set(100, 5000);
  set(101, -1000);
  set(106, complex ? 0 : 1);
  set(119, 100);
  set(220, ft ? 1 : 0);
  for (let i = 0; i < n * (complex ? 2 : 1); i++) v.setFloat32(2048 + 4 * i, Math.sin(i / 3) * 100, true);
  return new Uint8Array(buf);
}

// ---------------------------------------------------------------- mixtures
export const SUBGROUP_COLUMNS = { id: 'id', time: 'time', y: 'y', fixed: ['W1', 'W2'], membership: ['U1'] };

export function subgroupCsv(): string {
  const lines = ['"id","time","y","W1","W2","W3","U1","U2"'];
  for (let s = 1; s <= 6; s++)
    for (let t = 0; t < 3; t++)
      lines.push(
        [s, t, (s * 1.7 + t * 0.9).toFixed(4), t % 2, (s * 0.31 - 1).toFixed(4), 1, s % 3, s % 2].join(','),
      );
  return lines.join('\n') + '\n';
}

export function subgroupFit(): Record<string, unknown> {
  return {
    model: 'latent-subgroup linear mixed model',
    K: 2,
    correlation: 'independent',
    nSubjects: 4,
    nObservations: 12,
    fixed: ['x'],
    membership: ['(intercept)'],
    alpha: [1],
    mu: [0.05, 10.25],
    sigmaB2: 0.1,
    sigmaEps2: 0.01,
    phi: 0,
    gamma: [[0], [0.1]],
    logLik: -3,
    bic: 14,
    aic: 12,
    nIter: 10,
    converged: true,
    classSizes: [2, 2],
    meanPosterior: [0.5, 0.5],
    warnings: ['a warning'],
    data: 'data.csv',
  };
}

export function subgroupData(): string {
  const data = ['id,time,y,x'];
  ['s1', 's2', 's3', 's4'].forEach((id, i) =>
    [0, 1, 2].forEach((t) => data.push(`${id},${t},${(i < 2 ? 0 : 10) + t + 0.1 * i},${t}`)),
  );
  return data.join('\n') + '\n';
}
