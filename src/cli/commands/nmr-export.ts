// `tailor nmr export --model CHECKPOINT --out FILE.onnx`: a trained U-Net denoiser as one ONNX
// model file.
import { extname } from 'node:path';
import { exportDenoiserOnnx } from '../../nmr/index.js';
import { version } from '../../index.js';
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';

const HELP = `usage: tailor nmr export --model CHECKPOINT --out FILE.onnx [--format onnx] [--quiet]

Writes a U-Net trained by 'tailor nmr train' as one ONNX model (opset 17) that ONNX Runtime and
other ONNX engines run without tailor.

  input   spectra   float32 [batch, levels, points]: real spectra (levels 1), or for a stack
                    model the K+1 aligned and rescaled levels, level 0 first
  output  denoised  float32 [batch, 1, points], in the units of the input

Batch and points are dynamic axes: any length works (the graph pads it to a multiple of
2^(levels-1) and crops back). The max-abs input normalization and its inverse are in the graph.
The metadata (metadata_props) holds the architecture, the training domain and the tailor
version. The file is written atomically: it is complete or absent.

options:
      --model FILE   checkpoint (OUT/best.json or OUT/last.json)                 [required]
      --out FILE     the model file (.onnx)                                       [required]
      --format F     onnx (the only format; the default)
      --quiet        print nothing on success
  -h, --help         this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    model: { type: 'string' },
    out: { type: 'string' },
    format: { type: 'string', default: 'onnx' },
    quiet: { type: 'boolean', default: false },
  },
  run: ({ values }) => {
    if (!values.model || !values.out)
      throw new CliError(`give --model CHECKPOINT and --out FILE.onnx\n\n${HELP}`);
    if (values.format !== 'onnx') throw new CliError(`--format ${values.format}: the only format is onnx`);
    if (extname(values.out).toLowerCase() !== '.onnx')
      throw new CliError(`--out ${values.out}: the model file's name must end in .onnx`);
    const exported = exportDenoiserOnnx(values.model, values.out, version);
    if (!values.quiet)
      console.log(
        `wrote ${values.out} (${(exported.bytes.length / 1e6).toFixed(2)} MB, ${exported.model.numParameters().toLocaleString('en-US')} parameters)`,
      );
    exported.model.dispose();
    return 0;
  },
});
