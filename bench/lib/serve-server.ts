// The server half of the `serve` benchmark (bench/serve.ts forks it): `tailor serve`'s server on
// 127.0.0.1 over the runs directory in argv[2], with the default limits and the run's real PRL
// model, in a process of its own so that its RSS is its alone. It answers the parent's 'stats'
// messages with the RSS, the native tensor count of the evaluator thread, and how late its event
// loop ran since the last message (a stalled loop delays every client).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startReportServer } from '../../src/report/server.js';

const runsDir = process.argv[2];
if (!runsDir || !process.send) throw new Error('forked by bench/serve.ts with a runs directory');
const errors: string[] = [];
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const running = await startReportServer({
  runsDir,
  port: 0,
  host: '127.0.0.1',
  log: (line) => {
    if (line.startsWith('error')) errors.push(line);
  },
});
process.on('message', (m: unknown) => {
  if (m === 'stats') void sendStats();
  else if (m === 'stop') void running.close().then(() => process.exit(0));
});
async function sendStats(): Promise<void> {
  (globalThis as { gc?: () => void }).gc?.();
  const engine = await running.engineStats();
  process.send!({
    rss: process.memoryUsage().rss,
    heapUsed: process.memoryUsage().heapUsed,
    liveTensors: engine?.liveTensors ?? 0,
    queue: running.queueStats(),
    errors: errors.length,
    firstError: errors[0] ?? null,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
  });
  loopDelay.reset();
}
process.send({ port: Number(new URL(running.url).port) });
