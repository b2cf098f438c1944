/**
 * A configured Pi CLI's flags are read by a child process of the Node, never by importing a file of
 * that path into the parent (docs/configuration.md, "How the child's Pi is found"). A real pi parent
 * (a process, so it has its own pid) is given bgDelegate.piCli through the environment — the user's
 * own configuration — naming a fake package whose dist/cli/args.js leaves a witness file named by the
 * pid of the process that imported it, and whose parser lacks --session, so the delegate is refused
 * before any child starts. The witness shows that the parser was asked, and by whom.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PI_CLI_ENV } from "../../src/core/constants.ts";
import { REQUIRED_CHILD_FLAGS } from "../../src/host/index.ts";
import { makeTempDir, type ParentMessage, startRpcParent, useServerAndAgentDir } from "../helpers/pi-parent.ts";
import { witnessArgsJs } from "../helpers/sample-sources.ts";
import { calls, delegateCall, expectNothingStarted, expectRefusal, parentModel, resultOf } from "./launch-support.ts";

const { server, agent } = useServerAndAgentDir();

describe("the host's flags of a configured CLI", () => {
  it("are read in a child process: the configured args.js never runs in the parent's pid", async () => {
    const cwd = await makeTempDir("caps-parent");
    const pkg = await makeTempDir("caps-fake-pi");
    const witnessDir = join(pkg, "witness");
    mkdirSync(witnessDir);
    mkdirSync(join(pkg, "dist", "cli"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "fake-pi", version: "1.99.0", type: "module" }));
    const cli = join(pkg, "dist", "cli.js");
    writeFileSync(
      cli,
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(witnessDir)} + "/cli-" + process.pid, "ran");\n`,
    );
    const known = REQUIRED_CHILD_FLAGS.filter((flag) => flag !== "--session");
    writeFileSync(join(pkg, "dist", "cli", "args.js"), witnessArgsJs(witnessDir, known));
    server.setHandler(
      parentModel({
        onUser: (t) => (t === "go" ? calls(delegateCall("c_caps", { name: "t", prompt: "look" })) : { text: "ok" }),
      }),
    );
    const parent = await startRpcParent({ agentDir: agent, cwd, env: { [PI_CLI_ENV]: cli } });
    try {
      const parentPid = parent.pid;
      expect(parentPid).toBeGreaterThan(0);
      await parent.promptAndWait("go");
      const result = resultOf((await parent.messages()) as unknown as ParentMessage[], "c_caps");
      expectRefusal(result, "delegate_hook_contract_unsupported");
      // The answer came from the fake parser (only it lacks --session) ...
      expect(result.text).toContain("its CLI has no --session, which every delegate child needs");
      // ... which ran in exactly one other process, never in the parent; its cli.js never ran.
      const witnesses = readdirSync(witnessDir);
      expect(witnesses).toHaveLength(1);
      expect(witnesses[0]).toMatch(/^\d+$/);
      expect(witnesses).not.toContain(String(parentPid));
      await expectNothingStarted(server, agent.dir, parent, cwd);
    } finally {
      await parent.stop();
    }
  });
});
