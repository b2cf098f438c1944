/**
 * search_tools_unavailable: a platform with no rg at all (none in the agent dir's bin/, none on PATH,
 * and no @vscode/ripgrep binary next to the package) refuses at admission and creates nothing: no
 * directory, no process, no child request. The package is loaded by a real pi from a copy whose
 * node_modules lack @vscode, as on a platform the registry package does not cover.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import {
  makeTempDir,
  type ParentMessage,
  REPO_ROOT,
  startRpcParent,
  useAgentDir,
  useModelServer,
} from "../helpers/pi-parent.ts";
import { pathWithout } from "../helpers/search-path.ts";
import { calls, delegateCall, expectNothingStarted, expectRefusal, parentModel, resultOf } from "./launch-support.ts";

const server = useModelServer({ resetBetweenTests: false });
const agent = useAgentDir(server);

/** This package's src and manifest, with every dependency but @vscode (so no bundled rg). */
async function packageWithoutBundledRg(): Promise<string> {
  const dir = await makeTempDir("no-rg-package");
  cpSync(join(REPO_ROOT, "src"), join(dir, "src"), { recursive: true });
  cpSync(join(REPO_ROOT, "package.json"), join(dir, "package.json"));
  mkdirSync(join(dir, "node_modules"));
  for (const name of readdirSync(join(REPO_ROOT, "node_modules"))) {
    if (name === "@vscode" || name === ".bin") continue;
    symlinkSync(join(REPO_ROOT, "node_modules", name), join(dir, "node_modules", name));
  }
  return dir;
}

it("no rg anywhere: bg_delegate refuses with search_tools_unavailable and creates nothing", async () => {
  const pkg = await packageWithoutBundledRg();
  const cwd = await makeTempDir("no-rg-project");
  server.setHandler(
    parentModel({
      onUser: (text) => (text === "go" ? calls(delegateCall("c_norg", { name: "t", prompt: "look" })) : { text: "ok" }),
    }),
  );
  const parent = await startRpcParent({
    agentDir: agent,
    cwd,
    load: "none",
    args: ["-e", pkg],
    env: { PATH: pathWithout(["rg"]) },
  });
  try {
    await parent.promptAndWait("go");
    const result = resultOf((await parent.messages()) as unknown as ParentMessage[], "c_norg");
    expectRefusal(result, "search_tools_unavailable");
    expect(result.text).toContain("no rg for the child's grep and find");
    // Said plainly: the per-platform package is simply not installed here, not missing for the platform.
    expect(result.text).toContain(
      `@vscode/ripgrep-${process.platform}-${process.arch} is not installed (run \`npm ci\` in this package's directory)`,
    );
    expect(result.text).not.toContain("has no rg for");
    await expectNothingStarted(server, agent.dir, parent, cwd);
  } finally {
    await parent.stop();
  }
});
