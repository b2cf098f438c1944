/** Where a command writes (docs/cli.md, "Output"): the project directory and the two streams. */
export interface CliIo {
  /** The project (docs/cli.md, "Which project"): main() sets it to the nearest directory holding a store. */
  cwd: string;
  /** The directory the command was run in, for its options' relative paths; cwd when absent. */
  here?: string;
  stdout(data: string | Uint8Array): void;
  stderr(text: string): void;
}
