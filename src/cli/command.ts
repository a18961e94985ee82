// What every command does before its own work: parse its options strictly (node:util parseArgs,
// with -h/--help added), print its help for -h/--help, report an unknown option or a missing
// value, and for commands with subcommands (`tailor gmm fit ...`) pick the subcommand.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const HELP_OPTION = { help: { type: 'boolean', short: 'h', default: false } } as const;

/** --threads N and --device D: where the libtorch work of a command runs (runtime.ts reads them). */
export const RUNTIME_OPTIONS = { threads: { type: 'string' }, device: { type: 'string' } } as const;

/** --json: the result as JSON on stdout. */
export const JSON_OPTION = { json: { type: 'boolean', default: false } } as const;

/** The values of a command's options (and of --help), as parseArgs gives them. */
export type OptionValues<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O & typeof HELP_OPTION; strict: true }>
>['values'];

export interface CommandArgs<O extends Options> {
  values: OptionValues<O>;
  positionals: string[];
  /** With passThrough: the arguments after the first `--`, unparsed. */
  rest: string[];
  /** With subcommand: the subcommand (the first argument). */
  sub: string;
}

export interface CommandSpec<O extends Options> {
  /** Printed for -h/--help (exit 0). */
  help: string;
  /** The options; -h/--help is added. */
  options: O;
  /** Positional arguments are allowed (otherwise each is an error). */
  allowPositionals?: boolean;
  /**
   * An unknown option or a missing value is reported as its message followed by the help text,
   * instead of the message with "(see --help)".
   */
  helpOnParseError?: boolean;
  /** The arguments after the first `--` are not parsed but passed on as `rest` (tailor launch). */
  passThrough?: boolean;
  /**
   * The first argument names a subcommand and the options follow it (`tailor gmm fit --k 3`):
   * without one the help is printed with exit code 1, for -h, --help or help with 0.
   */
  subcommand?: boolean;
  /** Reads the arguments instead of parseArgs (tailor version takes exact words in any order). */
  parse?: (argv: string[]) => { values: OptionValues<O>; positionals: string[] };
  run: (args: CommandArgs<O>) => Promise<number> | number;
}

/** A command's `run(argv)`: options parsed, --help answered, then spec.run. */
export function defineCommand<const O extends Options>(
  spec: CommandSpec<O>,
): (argv: string[]) => Promise<number> {
  return async (argv) => {
    let sub = '';
    if (spec.subcommand) {
      const code = subcommandHelp(argv[0], spec.help);
      if (code !== undefined) return code;
      [sub, ...argv] = argv as [string, ...string[]];
    }
    const dash = spec.passThrough ? argv.indexOf('--') : -1;
    const own = dash >= 0 ? argv.slice(0, dash) : argv;
    const rest = spec.passThrough && dash >= 0 ? argv.slice(dash + 1) : [];
    const { values, positionals } = spec.parse ? spec.parse(own) : parse(own, spec);
    if ((values as { help?: boolean }).help) {
      console.log(spec.help);
      return 0;
    }
    return spec.run({ values, positionals, rest, sub });
  };
}

function parse<O extends Options>(
  args: string[],
  spec: CommandSpec<O>,
): { values: OptionValues<O>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...spec.options, ...HELP_OPTION },
      strict: true,
      allowPositionals: spec.allowPositionals ?? false,
    });
    return { values: values as OptionValues<O>, positionals };
  } catch (error) {
    // Otherwise the parseArgs error itself reaches main, which adds "(see --help)".
    if (spec.helpOnParseError) throw new CliError(`${(error as Error).message}\n\n${spec.help}`);
    throw error;
  }
}

export interface SubcommandsSpec {
  /** Printed without a subcommand (exit 1) and for -h, --help or help (exit 0). */
  help: string;
  /** Each subcommand's run, given the arguments after its name. */
  commands: Record<string, (argv: string[]) => Promise<number>>;
  /** The message for a subcommand not in `commands`. */
  unknown: (sub: string) => string;
}

/** A command made of subcommands that parse their own options (`tailor nmr simulate ...`). */
export function defineSubcommands(spec: SubcommandsSpec): (argv: string[]) => Promise<number> {
  return async (argv) => {
    const [sub, ...rest] = argv;
    const code = subcommandHelp(sub, spec.help);
    if (code !== undefined) return code;
    const command = Object.hasOwn(spec.commands, sub!) ? spec.commands[sub!] : undefined;
    if (!command) throw new CliError(spec.unknown(sub!));
    return command(rest);
  };
}

/** Prints the help when no subcommand is given (exit 1) or help is asked for (exit 0). */
function subcommandHelp(sub: string | undefined, help: string): number | undefined {
  if (sub !== undefined && sub !== '-h' && sub !== '--help' && sub !== 'help') return undefined;
  console.log(help);
  return sub === undefined ? 1 : 0;
}
