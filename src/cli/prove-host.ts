/**
 * `pi-bg-delegate prove-host` (docs/cli.md, "prove-host"): the host probe the extension runs on an
 * unproven Pi's first delegate, run by hand on the Pi named (default: `pi` on PATH). Prints each check
 * with what was seen; a passing version outside the proven set is recorded as self-proven in Pi's
 * agent dir, exactly as the extension records it.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DelegateError } from "../core/errors.ts";
import { fieldOf } from "../core/validate.ts";
import {
  HOST_PROBE_CHECKS,
  isolatedHostFlags,
  isProvenPiVersion,
  piBuildSha256,
  readHostCapabilities,
  runHostProbe,
  writeSelfProof,
} from "../host/index.ts";
import { EXIT, type ParsedCommand } from "./args.ts";
import type { CliIo } from "./io.ts";

/** Pi's agent dir as Pi computes it: $PI_CODING_AGENT_DIR, else ~/.pi/agent. */
function agentDirOf(env: NodeJS.ProcessEnv): string {
  const set = env.PI_CODING_AGENT_DIR?.trim();
  if (!set) return join(homedir(), ".pi", "agent");
  if (set === "~") return homedir();
  return set.startsWith("~/") ? join(homedir(), set.slice(2)) : resolve(set);
}

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

/** The version and session format of the host, asked of its own module by its own Node. */
function hostFacts(nodePath: string, cliPath: string): Promise<{ version: string; sessionVersion: number }> {
  let dir = dirname(cliPath);
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  const index = pathToFileURL(join(dir, "dist", "index.js")).href;
  const script = `import(${JSON.stringify(index)}).then((m) => process.stdout.write(JSON.stringify({ version: m.VERSION, sessionVersion: m.CURRENT_SESSION_VERSION })))`;
  return new Promise((resolvePromise, reject) => {
    execFile(
      nodePath,
      ["-e", script],
      { timeout: 30_000, env: { ...process.env, PI_OFFLINE: "1" } },
      (error, stdout) => {
        try {
          const parsed: unknown = JSON.parse(stdout);
          const version = fieldOf(parsed, "version");
          const sessionVersion = fieldOf(parsed, "sessionVersion");
          if (typeof version === "string" && typeof sessionVersion === "number") {
            resolvePromise({ version, sessionVersion });
            return;
          }
        } catch {
          // reported below
        }
        reject(new Error(`could not load ${index} with ${nodePath}: ${error?.message ?? stdout.slice(0, 200)}`));
      },
    );
  });
}

export async function proveHost(io: CliIo, p: ParsedCommand, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const named = p.pi ?? onPath("pi", env);
  if (named === undefined) refuse("no pi on PATH; name one with --pi <path to pi's dist/cli.js>");
  let piCli: string;
  try {
    piCli = realpathSync(resolve(io.cwd, named));
  } catch {
    refuse(`--pi: ${named} does not exist`);
  }
  const nodePath = p.node === undefined ? process.execPath : resolve(io.cwd, p.node);
  let facts: { version: string; sessionVersion: number };
  try {
    facts = await hostFacts(nodePath, piCli);
  } catch (error) {
    refuse(`${piCli} is not a Pi CLI this Node can load: ${error instanceof Error ? error.message : String(error)}`);
  }
  const capabilities = await readHostCapabilities(piCli, nodePath);
  const proven = isProvenPiVersion(facts.version);
  const say = (line: string) => {
    if (!p.json) io.stdout(`${line}\n`);
  };
  say(`Proving pi ${facts.version} (${piCli}) on Node at ${nodePath}`);
  say(`  ${proven ? "a proven version: the probe runs anyway, nothing is recorded" : "not a proven version"}`);
  say(
    `  child flags read from the host (${capabilities.source}): ${isolatedHostFlags(capabilities).join(" ") || "none beyond the common ones"}`,
  );
  if (capabilities.missing.length > 0) say(`  missing flags every child needs: ${capabilities.missing.join(", ")}`);
  const report = await runHostProbe({
    nodePath,
    piCli,
    sessionVersion: facts.sessionVersion,
    hostFlags: isolatedHostFlags(capabilities),
  });
  const ok = report.ok && capabilities.missing.length === 0;
  let recorded: string | undefined;
  const build = piBuildSha256(piCli);
  if (ok && !proven && build !== undefined) {
    recorded = writeSelfProof(agentDirOf(env), {
      pi_version: facts.version,
      cli_path: piCli,
      build_sha256: build,
      proven_at: new Date().toISOString(),
      duration_ms: report.durationMs,
      checks: report.checks,
    });
  }
  if (p.json) {
    const out = {
      pi_version: facts.version,
      cli_path: piCli,
      proven,
      ok,
      duration_ms: report.durationMs,
      capabilities,
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
