// `tailor report --run DIR`: writes DIR/report.html, a self-contained page (opens offline) with
// the charts of whatever the run's results.json holds.
import { CliError, asUserError } from '../errors.js';
import { defineCommand } from '../command.js';
import { writeFileAtomic } from '../../util/fs.js';
import { join } from 'node:path';
import { predictionsPage, runPage } from '../../report/index.js';
import { renderPage } from '../../report/html.js';

const HELP = `usage: tailor report --run DIR [--out FILE]
       tailor report --predictions FILE [--out FILE]

Writes an HTML report of a run directory (default DIR/report.html), detecting its kind from
DIR/results.json: a long-tail training run (training curves, per-class accuracy against class
size, the eleven test distributions, confusion matrix, PRL controllability, and the test-time
results 'tailor test-time-train --save' stored: SADE aggregation, PRL preference search, prior
matching, the EM-adjusted scores and the oracle prior), a Gaussian mixture
('tailor gmm fit --out DIR/results.json'; data beside it as data.csv or at the recorded path;
'gmm select --json' output as DIR/select.json adds the BIC curve), a subgroup model
('tailor subgroup fit --out DIR/results.json --posterior DIR/posterior.csv', or 'subgroup select
--out DIR/results.json'), an NMR evaluation ('tailor nmr evaluate --json > DIR/results.json':
the raw levels, the baselines raw, savgol, matched, wavelet, tv, cadzow, fusion and pseudo_gt,
and a trained model when it was scored) or an NMR yardstick ('tailor nmr yardstick --json
DIR/results.json': each candidate's peak-picking operating points, its precision-recall curve
and its recall against false peaks per spectrum). An 'nmr train' run directory (history.json and
best.json, no results.json) gets its training report: the losses by stage, the validation scores
that chose best.json and the learning rate per epoch. An 'nmr ablate' output (OUT/ablation,
holding ablation.json) gets the variants compared: each variant's mean and spread over its seeds,
every run as a point beside its variant, and each run's row.
With --predictions, the page of a 'tailor predict' output (FILE, its FILE.summary.json beside
it; default page FILE.report.html): the input's estimated class prior against the training prior,
the confidence histogram and the most confident images of each predicted class.
The page inlines its chart library and images and needs no server or network.

options:
  --run DIR            the run directory
  --predictions FILE   a 'tailor predict' output instead of a run
  --out FILE           write the page there instead of DIR/report.html
  -h, --help           this text`;

export const run = defineCommand({
  help: HELP,
  options: { run: { type: 'string' }, predictions: { type: 'string' }, out: { type: 'string' } },
  helpOnParseError: true,
  run: async ({ values }) => {
    if (values.predictions !== undefined) {
      if (values.run !== undefined) throw new CliError(`give --run DIR or --predictions FILE, not both`);
      const file = values.predictions.replace(/\.summary\.json$/, '');
      const path = values.out ?? `${file}.report.html`;
      try {
        writeFileAtomic(path, renderPage(await predictionsPage(file)));
      } catch (error) {
        throw asUserError(error);
      }
      console.log(`wrote ${path} (predictions report)`);
      return 0;
    }
    if (!values.run) throw new CliError(`give --run DIR (or --predictions FILE)\n\n${HELP}`);
    const path = values.out ?? join(values.run, 'report.html');
    let kind: string;
    try {
      const page = runPage(values.run);
      kind = page.kind;
      writeFileAtomic(path, renderPage(page));
    } catch (error) {
      // The report readers name the file and field; a plain Error from them is the run's problem too.
      throw asUserError(error);
    }
    console.log(`wrote ${path} (${kind} report)`);
    return 0;
  },
});
