#!/usr/bin/env node
// The `tailor` command: dispatches to one module per subcommand, loaded lazily so that
// commands which do not need libtorch start fast and work without the native addon.
import { CliError } from './errors.js';

interface CommandEntry {
  summary: string;
  load: () => Promise<{ run: (argv: string[]) => Promise<number> }>;
}

const commands: Record<string, CommandEntry> = {
  version: { summary: 'print the version and the engine build', load: () => import('./commands/version.js') },
};

function usage(): string {
  const lines = ['usage: tailor <command> [options]', '', 'commands:'];
  for (const [name, entry] of Object.entries(commands)) lines.push(`  ${name.padEnd(18)} ${entry.summary}`);
  lines.push('', "Run 'tailor <command> --help' for the options of a command.");
  return lines.join('\n');
}

export function registeredCommands(): string[] {
  return Object.keys(commands);
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    console.log(usage());
    return name === undefined ? 1 : 0;
  }
  const entry = commands[name];
  if (!entry) {
    const suggestion = closest(name, Object.keys(commands));
    throw new CliError(`unknown command '${name}'${suggestion ? `; did you mean '${suggestion}'?` : ''}\n\n${usage()}`);
  }
  const mod = await entry.load();
  return mod.run(rest);
}

function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = levenshtein(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

export function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length]!;
}

const isEntryPoint = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!);
if (isEntryPoint) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof CliError) {
        console.error(`tailor: ${error.message}`);
        process.exitCode = error.exitCode;
      } else {
        console.error(error);
        process.exitCode = 1;
      }
    },
  );
}
