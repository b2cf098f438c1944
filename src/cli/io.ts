/** Where a command writes (docs/cli.md, "Output"): the project directory and the two streams. */
export interface CliIo {
  cwd: string;
  stdout(data: string | Uint8Array): void;
  stderr(text: string): void;
}
