// Denoise one NMR spectrum held in a Float64Array with a 1-D U-Net. A real model comes from
// `tailor nmr train` (loadDenoiser(path)); to stay fast and self-contained this example trains a
// tiny one for a few steps on synthetic Lorentzian spectra. Needs the libtorch engine.
import * as torch from 'tailor/torch';
import { optim, nn } from 'tailor/torch';
import { UNet1d, denoiseSpectra } from 'tailor/nmr';

const L = 512;
let state = 7;
const uniform = () => ((state = (state * 1103515245 + 12345) % 2147483648) + 0.5) / 2147483648;
const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());

/** A clean spectrum of a few Lorentzian lines and a noisy copy of it. */
function pair(noise: number): { clean: Float64Array; noisy: Float64Array } {
  const clean = new Float64Array(L);
  const lines = 2 + Math.floor(uniform() * 4);
  for (let k = 0; k < lines; k++) {
    const centre = uniform() * L;
    const width = 2 + uniform() * 6;
    const height = 0.2 + uniform();
    for (let i = 0; i < L; i++) clean[i]! += height / (1 + ((i - centre) / width) ** 2);
  }
  const noisy = clean.map((v) => v + noise * normal());
  return { clean, noisy };
}

const rmse = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2;
  return Math.sqrt(s / a.length);
};

torch.manualSeed(0);
const model = new UNet1d({ channels: [8, 16, 16], dilations: [1, 2, 4], kernel: 5, groups: 4, se: 'none' });
const opt = new optim.AdamW(model.parameters(), { lr: 3e-3 });
model.train();
for (let step = 0; step < 40; step++) {
  const batch = Array.from({ length: 8 }, () => pair(0.05));
  const x = Float32Array.from(batch.flatMap((p) => Array.from(p.noisy)));
  const y = Float32Array.from(batch.flatMap((p) => Array.from(p.clean)));
  torch.tidy(() => {
    const out = model.forward(torch.tensor(x, { shape: [8, L] }));
    nn.functional.mseLoss(out, torch.tensor(y, { shape: [8, L] })).backward();
  });
  opt.step();
  opt.zeroGrad();
}

// The spectrum to denoise: any Float64Array (here a fresh synthetic one).
const { clean, noisy } = pair(0.05);
const [denoised] = denoiseSpectra(model, [noisy]);
console.log(
  `error before: ${rmse(noisy, clean).toFixed(4)}, after denoising: ${rmse(denoised!, clean).toFixed(4)}`,
);
