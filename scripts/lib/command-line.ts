/**
 * The command line of an `npm run` command: its options parsed (node:util
 * parseArgs), or the exit status when there is nothing more to do: 0 after
 * printing `usage` for `--help`, 2 after printing the parse error and `usage`.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;
type WithHelp<T extends Options> = T & { help: { type: "boolean"; short: "h" } };
type Values<T extends Options> = ReturnType<typeof parseArgs<{ options: WithHelp<T> }>>["values"];

export function commandLine<const T extends Options>(usage: string, options: T): Values<T> | number {
  let values: Values<T>;
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: "boolean", short: "h" } } as WithHelp<T> }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  if ((values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  return values;
}
