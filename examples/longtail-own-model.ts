// A model of your own on long-tailed data: a small network written with tailor/torch, trained on
// 2-d Gaussian blobs whose class sizes fall off 100 to 1, with plain cross-entropy, with the
// logit-adjusted loss and with LDAM-DRW (a cosine classifier, class-balanced weights in the last
// epochs); then the accuracy of each shot group on a balanced test set, and what post-hoc logit
// adjustment does to the cross-entropy model. Needs the libtorch engine.
import * as torch from 'tailor/torch';
import { nn, optim } from 'tailor/torch';
import { LDAMLoss, logitAdjustedLoss, logitAdjustment, longTailCounts, shotGroups } from 'tailor/longtail';

torch.manualSeed(0);
const F = nn.functional;
const CLASSES = 10;
const EPOCHS = 24;
const BATCH = 128;
// 500 examples of class 0 down to 5 of class 9: 4 many-shot, 3 medium-shot, 3 few-shot classes
const counts = longTailCounts(CLASSES, 500, 100);
const groups = shotGroups(counts);

/** Class c's examples scatter around a point on a circle; neighbouring classes overlap. */
const centres = torch.keep(
  torch.tensor(
    Float64Array.from(
      { length: 2 * CLASSES },
      (_, i) => (i % 2 === 0 ? Math.cos : Math.sin)((2 * Math.PI * Math.floor(i / 2)) / CLASSES) * 3,
    ),
    { shape: [CLASSES, 2], dtype: 'float32' },
  ),
);
function blobs(perClass: number[]): { x: torch.Tensor; y: torch.Tensor } {
  const labels = perClass.flatMap((n, c) => new Array<bigint>(n).fill(BigInt(c)));
  const y = torch.tensor(BigInt64Array.from(labels));
  const x = centres.indexSelect(0, y).add(torch.randn([labels.length, 2]).mul(0.7));
  return { x: torch.keep(x), y: torch.keep(y) };
}
const train = blobs(counts);
const test = blobs(new Array<number>(CLASSES).fill(100));

/** An MLP; with `cosine`, its logits are the cosines between features and class weights (LDAM's). */
class Net extends nn.Module {
  readonly body = this.registerModule(
    'body',
    new nn.Sequential(new nn.Linear(2, 32), new nn.ReLU(), new nn.Linear(32, 32), new nn.ReLU()),
  );
  readonly head: nn.Linear;
  constructor(readonly cosine = false) {
    super();
    this.head = this.registerModule('head', new nn.Linear(32, CLASSES, { bias: !cosine }));
  }
  forward(x: torch.Tensor): torch.Tensor {
    return torch.tidy(() => {
      const h = this.body.forward(x);
      if (!this.cosine) return this.head.forward(h);
      return F.normalize(h).matmul(F.normalize(this.head.weight).t());
    });
  }
}

/** Trains a fresh network with `lossOf(logits, target, epoch)`, in shuffled mini-batches. */
function trained(
  cosine: boolean,
  lossOf: (z: torch.Tensor, y: torch.Tensor, epoch: number) => torch.Tensor,
): Net {
  const model = new Net(cosine);
  const opt = new optim.Adam(model.parameters(), { lr: 0.01 });
  const n = train.y.size(0);
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    const order = torch.keep(torch.randperm(n));
    for (let start = 0; start < n; start += BATCH) {
      torch.tidy(() => {
        const idx = order.narrow(0, start, Math.min(BATCH, n - start));
        lossOf(model.forward(train.x.indexSelect(0, idx)), train.y.indexSelect(0, idx), epoch).backward();
      });
      opt.step();
      opt.zeroGrad();
    }
    order.dispose();
  }
  return model;
}

/** Mean per-class accuracy of each shot group (the test set is balanced). */
function groupAccuracy(logits: torch.Tensor): string {
  const right = logits.argmax(1).eq(test.y).toFloat64Array();
  const perClass = Array.from(
    { length: CLASSES },
    (_, c) => right.slice(100 * c, 100 * (c + 1)).reduce((a, b) => a + b) / 100,
  );
  const mean = (classes: number[]) => classes.reduce((a, c) => a + perClass[c]!, 0) / classes.length;
  return [groups.many, groups.medium, groups.few, perClass.map((_, c) => c)]
    .map((g) => mean(g).toFixed(2).padStart(7))
    .join('');
}

const ldam = new LDAMLoss(counts, { scaleLogits: true, s: 10, reweightEpoch: (3 * EPOCHS) / 4 });
const models = {
  'cross-entropy': trained(false, (z, y) => F.crossEntropy(z, y)),
  'logit-adjusted': trained(false, (z, y) => logitAdjustedLoss(z, y, counts)),
  'LDAM-DRW': trained(true, (z, y, epoch) => {
    ldam.setEpoch(epoch); // class-balanced weights for the last quarter of the epochs
    return ldam.forward(z, y);
  }),
};

console.log(`training counts ${counts.join(' ')}; accuracy on a balanced test set`);
console.log(`${'loss'.padEnd(26)}   many medium    few    all`);
torch.noGrad(() =>
  torch.tidy(() => {
    for (const [name, model] of Object.entries(models))
      console.log(`${name.padEnd(26)}${groupAccuracy(model.forward(test.x))}`);
    // Post-hoc: the cross-entropy model's logits minus tau * log(prior)
    const adjusted = models['cross-entropy'].forward(test.x).sub(logitAdjustment(counts));
    console.log(`${'cross-entropy, adjusted'.padEnd(26)}${groupAccuracy(adjusted)}`);
  }),
);
for (const model of Object.values(models)) model.dispose();
for (const t of [centres, train.x, train.y, test.x, test.y]) t.dispose();
