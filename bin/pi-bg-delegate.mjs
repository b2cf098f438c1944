#!/usr/bin/env node
// The pi-bg-delegate command (docs/cli.md). It loads the TypeScript source with jiti, as Pi loads the
// extension, so there is no build step; on Node 20 and 22 alike.
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const { main } = await jiti.import("../src/cli/main.ts");

// A reader that stops early (`| head`) closes the pipe: that is not an error of this command.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2), {
  cwd: process.cwd(),
  stdout: (data) => process.stdout.write(data),
  stderr: (text) => process.stderr.write(text),
});
