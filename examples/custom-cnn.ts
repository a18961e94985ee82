// A small convolutional network written with tailor/torch and trained for a few steps on random
// images (the loss falls as it memorises them), with a 1cycle schedule and gradient clipping.
// Needs the libtorch engine.
import * as torch from 'tailor/torch';
import { nn, optim } from 'tailor/torch';

torch.manualSeed(0);

class SmallCnn extends nn.Module {
  readonly features = this.registerModule(
    'features',
    new nn.Sequential(
      new nn.Conv2d(1, 8, 3, { padding: 1 }),
      new nn.ReLU(),
      new nn.MaxPool2d(2),
      new nn.Conv2d(8, 16, 3, { padding: 1 }),
      new nn.ReLU(),
      new nn.AdaptiveAvgPool2d(1),
      new nn.Flatten(),
    ),
  );
  readonly classifier = this.registerModule('classifier', new nn.Linear(16, 4));

  forward(x: torch.Tensor): torch.Tensor {
    return torch.tidy(() => this.classifier.forward(this.features.forward(x)));
  }
}

const model = new SmallCnn();
const opt = new optim.AdamW(model.parameters(), { lr: 0.01 });
// the 1cycle policy over the 31 steps (rate up, then annealed; beta1 the other way)
const schedule = new optim.OneCycleLR(opt, { maxLr: 0.05, totalSteps: 31 });
const images = torch.keep(torch.randn([32, 1, 16, 16]));
const labels = torch.keep(torch.randint(0, 4, [32]));

for (let step = 0; step <= 30; step++) {
  const loss = torch.tidy(() => {
    const l = nn.functional.crossEntropy(model.forward(images), labels);
    l.backward();
    nn.utils.clipGradNorm_(model.parameters(), 5); // returns the norm before clipping (a tensor)
    return l.item();
  });
  opt.step();
  opt.zeroGrad();
  schedule.step();
  if (step % 10 === 0) console.log(`step ${step}: loss ${loss.toFixed(4)}`);
}
const accuracy = torch.noGrad(() =>
  torch.tidy(() => model.forward(images).argmax(1).eq(labels).float().mean().item()),
);
console.log(
  `training accuracy ${(100 * accuracy).toFixed(1)}% (${model.parameters().length} parameter tensors)`,
);
