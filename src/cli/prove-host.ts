/**
 * `pi-bg-delegate prove-host` (docs/cli.md, "prove-host"): the host probe the extension runs on an
 * unproven Pi's first delegate, run by hand on the Pi named (default: `pi` on PATH). The host's part
 * (its facts, flags, the probe and the record) is src/host/prove.ts; this file reads the arguments,
 * refuses a Node too old for the host naming the one it needs, and prints what was found.
 */
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { DelegateError } from "../core/errors.ts";
import { HOST_PROBE_CHECKS, isolatedHostFlags, nodeMismatch, piAgentDir, proveNamedHost } from "../host/index.ts";
import { EXIT, type ParsedCommand } from "./args.ts";
import type { CliIo } from "./io.ts";

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function refuse(message: string): never {
  throw new DelegateError("delegate_hook_contract_unsupported", message, { childProcessCreated: false });
}

export async function proveHost(io: CliIo, p: ParsedCommand, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const named = p.pi ?? onPath("pi", env);
  if (named === undefined) refuse("no pi on PATH; name one with --pi <path to pi's dist/cli.js>");
  let piCli: string;
  try {
    piCli = realpathSync(resolve(io.here ?? io.cwd, named));
  } catch {
    refuse(`--pi: ${named} does not exist`);
  }
  const nodePath = p.node === undefined ? process.execPath : resolve(io.here ?? io.cwd, p.node);
  const mismatch = await nodeMismatch(piCli, nodePath);
  if (mismatch !== undefined) {
    const given =
      p.node === undefined
        ? `this Node (${mismatch.nodePath}) is ${mismatch.given}`
        : `--node ${mismatch.nodePath} is ${mismatch.given}`;
    refuse(
      `${piCli} needs Node >= ${mismatch.needed} (its package.json engines) and ${given}: name one with --node <path to a Node >= ${mismatch.needed}>`,
    );
  }
  const say = (line: string) => {
    if (!p.json) io.stdout(`${line}\n`);
  };
  const proof = await proveNamedHost({
    piCli,
    nodePath,
    agentDir: piAgentDir(env),
    onStart: (facts, capabilities, proven) => {
      say(`Proving pi ${facts.version} (${piCli}) on Node at ${nodePath}`);
      say(`  ${proven ? "a proven version: the probe runs anyway, nothing is recorded" : "not a proven version"}`);
      say(
        `  child flags read from the host (${capabilities.source}): ${isolatedHostFlags(capabilities).join(" ") || "none beyond the common ones"}`,
      );
      if (capabilities.missing.length > 0) say(`  missing flags every child needs: ${capabilities.missing.join(", ")}`);
    },
  });
  const { facts, report, ok, recorded } = proof;
  if (p.json) {
    const out = {
      pi_version: facts.version,
      cli_path: piCli,
      proven: proof.proven,
      ok,
      duration_ms: report.durationMs,
      capabilities: proof.capabilities,
      checks: report.checks,
      recorded: recorded ?? null,
    };
    io.stdout(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    for (const check of report.checks) {
      say(`${check.ok ? "  ok  " : "  FAIL"} ${check.id}: ${HOST_PROBE_CHECKS[check.id]}`);
      say(`        seen: ${check.seen}`);
    }
    const passed = report.checks.filter((c) => c.ok).length;
    say(`${passed} of ${report.checks.length} checks passed in ${(report.durationMs / 1000).toFixed(1)} s.`);
    if (recorded !== undefined) say(`pi ${facts.version} is self-proven on this machine; recorded in ${recorded}`);
    else if (!ok) say(`pi ${facts.version} cannot run delegates: bg_delegate and bg_fusion refuse it.`);
  }
  return ok ? EXIT.ok : EXIT.failure;
}
