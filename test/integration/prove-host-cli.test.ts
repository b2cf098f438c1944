/**
 * `pi-bg-delegate prove-host --pi <cli> --node <node>` (docs/cli.md, "prove-host") on a real Pi 1.6.0,
 * run by a Node too old for it: without --node it says which Node the host needs (never the host's own
 * error); with --node it proves the host on that Node. Nothing of the host is loaded into the CLI's own
 * Node (src/host/prove.ts), so the old Node never has to load it.
 */
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { resolveHost } from "../../scripts/hosts.mjs";
import { HOST_PROBE_CHECK_IDS } from "../../src/host/index.ts";
import { REPO_ROOT } from "../helpers/pi-paths.ts";
import { makeTempDir } from "../helpers/temp.ts";

const CLI_BIN = join(REPO_ROOT, "bin", "pi-bg-delegate.mjs");
const NEW = resolveHost("1.6.0");
const MIN_NODE = NEW.minNode;
/** What prove-host names: the CLI with links resolved. */
const CLI = realpathSync(NEW.cliPath);

function versionOf(node: string): string | undefined {
  const run = spawnSync(node, ["--version"], { encoding: "utf8" });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

function older(version: string, than: string): boolean {
  const a = version.replace(/^v/, "").split(".").map(Number);
  const b = than.split(".").map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** A Node on this machine too old for Pi 1.6.0 (the 0.73.1 host's, or the system's), if there is one. */
const OLD_NODE = [resolveHost("0.73.1").nodePath, process.execPath, "/usr/bin/node"].find((node) => {
  const version = versionOf(node);
  return version !== undefined && older(version, MIN_NODE);
});

async function proveHost(node: string, args: string[]) {
  const agentDir = await makeTempDir("prove-cli-agent");
  const cwd = await makeTempDir("prove-cli-cwd");
  const ended = await execa(node, [CLI_BIN, "prove-host", "--pi", NEW.cliPath, ...args], {
    cwd,
    reject: false,
    stdin: "ignore",
    env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
  });
  return { code: ended.exitCode ?? -1, stdout: ended.stdout, stderr: ended.stderr };
}

describe.skipIf(OLD_NODE === undefined)(`prove-host from a Node older than ${MIN_NODE}`, () => {
  const old = OLD_NODE ?? "";

  it("without --node, or with an old one, names the Node the host needs", async () => {
    const plain = await proveHost(old, []);
    expect(plain.code).toBe(1);
    const first = plain.stderr.split("\n")[0];
    expect(first).toBe(
      `[delegate_hook_contract_unsupported] ${CLI} needs Node >= ${MIN_NODE} (its package.json engines) and this Node (${old}) is ${versionOf(old)}: name one with --node <path to a Node >= ${MIN_NODE}>`,
    );
    expect(plain.stderr).not.toMatch(/TypeError|\n\s+at /);
    const named = await proveHost(old, ["--node", old]);
    expect(named.code).toBe(1);
    expect(named.stderr.split("\n")[0]).toContain(`and --node ${old} is ${versionOf(old)}: name one with --node`);
  });

  it("with --node <a new enough Node>, proves the host on it", async () => {
    const proved = await proveHost(old, ["--node", NEW.nodePath, "--json"]);
    expect(proved.stderr).toBe("");
    expect(proved.code).toBe(0);
    const out = JSON.parse(proved.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ pi_version: "1.6.0", cli_path: CLI, proven: true, ok: true, recorded: null });
    expect(out.capabilities).toEqual({ noMcp: true, projectTrust: true, missing: [], source: "parse_args" });
    expect((out.checks as { id: string; ok: boolean }[]).map((c) => [c.id, c.ok])).toEqual(
      HOST_PROBE_CHECK_IDS.map((id) => [id, true]),
    );
  });
});
