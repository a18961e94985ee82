// A map-style dataset read lazily from disk: one small binary file per sample (8 float32 features)
// in a temporary directory, read and decoded only when the DataLoader asks for that item. With
// `for await`, the reads of the next batches run while the current batch trains. A linear
// classifier learns the three classes in a few epochs. Needs the libtorch engine.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from 'tailor/torch';
import { nn, optim } from 'tailor/torch';

torch.manualSeed(0);
const FEATURES = 8;
const dir = mkdtempSync(join(tmpdir(), 'tailor-lazy-'));

// 60 samples of 3 classes, each written to its own file: class c has mean 2 in feature c.
const labels = Array.from({ length: 60 }, (_, i) => i % 3);
labels.forEach((label, i) => {
  const x = torch.tidy(() => torch.randn([FEATURES]).toFloat32Array());
  x[label]! += 2;
  writeFileSync(join(dir, `sample-${i}.f32`), x);
});

/** Sample i: its file read and decoded on demand, with its label. */
class FileDataset implements torch.data.Dataset<{ x: Float32Array; label: number }> {
  readonly length = labels.length;
  reads = 0;
  async get(i: number): Promise<{ x: Float32Array; label: number }> {
    const bytes = await readFile(join(dir, `sample-${i}.f32`));
    this.reads++;
    // Copied out of the file buffer, so the array owns aligned float32 memory.
    const x = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    return { x, label: labels[i]! };
  }
}

const dataset = new FileDataset();
// defaultCollate turns the Float32Arrays into one tensor [batch, 8] and the labels into int64 [batch]
const loader = new torch.data.DataLoader(dataset, { batchSize: 12, shuffle: true, seed: 1, prefetch: 2 });
const model = new nn.Linear(FEATURES, 3);
const opt = new optim.SGD(model.parameters(), { lr: 0.5 });

try {
  for (let epoch = 0; epoch < 5; epoch++) {
    let total = 0;
    for await (const batch of loader) {
      total += torch.tidy(() => {
        const loss = nn.functional.crossEntropy(model.forward(batch.x), batch.label);
        loss.backward();
        return loss.item() * batch.x.shape[0]!;
      });
      opt.step();
      opt.zeroGrad();
      torch.dispose(batch);
    }
    console.log(`epoch ${epoch}: mean loss ${(total / dataset.length).toFixed(3)}`);
  }
  let right = 0;
  for await (const batch of new torch.data.DataLoader(dataset, { batchSize: 20 })) {
    right += torch.noGrad(() =>
      torch.tidy(() => model.forward(batch.x).argmax(1).eq(batch.label).sum().item()),
    );
    torch.dispose(batch);
  }
  console.log(`${dataset.reads} file reads; training accuracy ${right}/${dataset.length}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
