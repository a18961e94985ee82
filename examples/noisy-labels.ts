// Finding mislabelled examples with per-example gradients: a small network is trained on 2-d
// points of three classes of which one in ten carries a wrong label; then `torch.func` gives the
// gradient of each example's loss with respect to the weights in one vmapped call
// (`vmap(func.grad(loss))` over `func.functionalCall`), and the examples whose gradients are
// largest are flagged. Prints how many of the flagged ones are truly mislabelled. Needs the
// libtorch engine.
import * as torch from 'tailor/torch';
import { func, nn, optim, type Tensor } from 'tailor/torch';

torch.manualSeed(0);
const F = nn.functional;
const CLASSES = 3;
const PER_CLASS = 200;
const NOISE = 0.1;

// Three Gaussian blobs; a tenth of the labels are replaced by another class.
const n = CLASSES * PER_CLASS;
const truth = Array.from({ length: n }, (_, i) => Math.floor(i / PER_CLASS));
const noisy = truth.map((c, i) => (i % Math.round(1 / NOISE) === 0 ? (c + 1 + (i % 2)) % CLASSES : c));
const mislabelled = new Set(noisy.flatMap((c, i) => (c !== truth[i] ? [i] : [])));
const centres = [
  [0, 2.5],
  [-2.2, -1.2],
  [2.2, -1.2],
];
const x = torch.keep(
  torch.randn([n, 2]).add(
    torch.tensor(
      truth.flatMap((c) => centres[c]!),
      { shape: [n, 2] },
    ),
  ),
);
const y = torch.keep(torch.tensor(BigInt64Array.from(noisy.map(BigInt))));

const model = new nn.Sequential(new nn.Linear(2, 16), new nn.Tanh(), new nn.Linear(16, CLASSES));
const optimizer = new optim.Adam(model.parameters(), { lr: 0.05 });
for (let epoch = 0; epoch < 60; epoch++)
  torch.tidy(() => {
    optimizer.zeroGrad();
    F.crossEntropy(model.forward(x), y).backward();
    optimizer.step();
  });

// The loss of one example as a function of the weights, then its gradient for every example.
const weights = Object.fromEntries([...model.namedParameters()].map(([name, p]) => [name, p.detach()]));
const loss = (w: Record<string, Tensor>, xi: Tensor, yi: Tensor) =>
  F.crossEntropy(func.functionalCall(model, w, [xi.unsqueeze(0)]) as Tensor, yi.unsqueeze(0));
const norms = torch.tidy(() => {
  const grads = torch.vmap(func.grad(loss), [null, 0, 0])(weights, x, y) as Record<string, Tensor>;
  // The norm of each example's whole gradient: the per-parameter norms combined.
  const squares = Object.values(grads).map((g) => g.reshape(n, -1).square().sum(1));
  return torch.stack(squares, 1).sum(1).sqrt().toFloat64Array();
});

const flagged = Array.from(norms.keys())
  .sort((a, b) => norms[b]! - norms[a]!)
  .slice(0, mislabelled.size);
const hits = flagged.filter((i) => mislabelled.has(i)).length;
console.log(`${mislabelled.size} of ${n} labels are wrong`);
console.log(
  `the ${flagged.length} examples with the largest gradients: ${hits} mislabelled ` +
    `(precision ${(hits / flagged.length).toFixed(2)}, ${NOISE.toFixed(2)} by chance)`,
);
model.dispose();
