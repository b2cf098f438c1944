import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DelegateError } from "../core/errors.ts";

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** pi's CLI entry: dist/cli.js, or dist/bundle/cli.js (the `pi` bin of the @earendil-works 1.x hosts). */
function looksLikePiCli(path: string): boolean {
  if (basename(path) !== "cli.js" || !isFile(path)) return false;
  const dir = dirname(path);
  return basename(dir) === "dist" || (basename(dir) === "bundle" && basename(dirname(dir)) === "dist");
}

/** Whether `path` (symlinks resolved) is a Pi CLI entry: a `pi` command rather than an SDK host's script. */
export function isPiCliPath(path: string | undefined): boolean {
  if (path === undefined) return false;
  try {
    return looksLikePiCli(realpathSync(path));
  } catch {
    return false;
  }
}

/**
 * The host's own pi CLI (docs/configuration.md, "How the child's Pi is found"): the configured path,
 * else process.argv[1] when it resolves to pi's dist/cli.js. Never "whatever pi is on PATH".
 */
export function locatePiCli(configured: string | undefined, argv1: string | undefined = process.argv[1]): string {
  if (configured !== undefined) {
    if (isFile(configured)) return configured;
    throw new DelegateError("delegate_isolation_unsupported", `configured pi CLI ${configured} is not a file`, {
      childProcessCreated: false,
    });
  }
  if (argv1 !== undefined) {
    try {
      const real = realpathSync(argv1);
      if (looksLikePiCli(real)) return real;
    } catch {
      // fall through to the refusal
    }
  }
  throw new DelegateError(
    "delegate_isolation_unsupported",
    "cannot locate the host's pi CLI (process.argv[1] is not pi's dist/cli.js or dist/bundle/cli.js and bgDelegate.piCli is not set)",
    { childProcessCreated: false },
  );
}

/** The package-owned child guard, loaded into every child with -e. */
export function locateGuard(): string {
  const path = join(dirname(fileURLToPath(import.meta.url)), "..", "child", "guard.ts");
  if (!existsSync(path)) {
    throw new DelegateError("delegate_isolation_unsupported", `the child guard is missing at ${path}`, {
      childProcessCreated: false,
    });
  }
  return path;
}
