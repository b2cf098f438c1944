/**
 * A follow-up chain a repository ships (docs/subsystems/retrieval.md, "Verification order"), with
 * real parents and children: two completed trees written by real children, whose follow-up links
 * are made to point at each other through the production manifest writer (writeManifest, the one
 * every launch and adjudication uses), are a typed failure naming the task in bg_result, a refused
 * follow-up, and a `show` that returns. A follow-up's child reads a spill file of the task it
 * follows (the resumed session names it), and cites what it read there: bg_result's citation check
 * counts it.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { ArtifactEvidence, DelegateResultFile } from "../../src/core/types.ts";
import { readManifest, writeManifest } from "../../src/store/lookup.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  call,
  delegateVia,
  installParentDriver,
  lastToolResult,
  noticeOf,
  promptWhenIdle,
} from "../helpers/drive.ts";
import { drivenSdkParent, taskDirOf } from "../helpers/held-project.ts";
import { type ModelRequest, makeTempDir, type SdkParent, script, withSdkParent } from "../helpers/pi-parent.ts";
import { PRICED_MODEL, pricedRoute, useServerAndPricedAgentDir } from "../helpers/spend-route.ts";

const { server, agent: priced } = useServerAndPricedAgentDir();

const RETRY_SOURCE = { "src/retry.ts": "// the retry budget\nexport const RETRIES = 7;\n" };

async function ended(parent: SdkParent, args: Record<string, unknown>): Promise<string> {
  const id = await delegateVia(parent, args);
  await noticeOf(parent, id);
  await parent.waitForIdle();
  return id;
}

describe("a shipped follow-up cycle", () => {
  it("is follow_up_chain_invalid naming the task in bg_result and a follow-up, and show returns", async () => {
    const { cwd, parent } = await drivenSdkParent(server, "chain-cycle", RETRY_SOURCE);
    try {
      const first = await ended(parent, {
        name: "find retries",
        prompt: `Where? ${script({ tool: "read", args: { path: "src/retry.ts" } }, { text: "src/retry.ts:2." })}`,
      });
      const second = await ended(parent, {
        name: "ask again",
        previousTaskId: first,
        prompt: `How many? ${script({ text: "Seven: src/retry.ts:2." })}`,
      });
      const [firstDir, secondDir] = [taskDirOf(cwd, parent, first), taskDirOf(cwd, parent, second)];
      expect((await bgResultVia(parent, { taskId: second })).isError).toBe(false);

      // The first task now claims to follow the second, far down a chain (the old recursion bound).
      const hash = (file: string) => sha256Hex(readFileSync(join(secondDir, file)));
      writeManifest(firstDir, {
        ...readManifest(firstDir),
        follow_up: {
          previous_task_id: second,
          previous_result_sha256: hash("result.json"),
          previous_session_sha256: hash("child-session/session.jsonl"),
          previous_end: "completed",
          chain_position: 1_000_000,
          carried_session_bytes: 0,
          reseed: false,
          previous_task_dir: secondDir,
          carried_tokens: null,
        },
      });

      for (const id of [first, second]) {
        const view = await bgResultVia(parent, { taskId: id });
        expect(view.isError).toBe(true);
        expect(view.text).toMatch(/^\[follow_up_chain_invalid\]/);
        expect(view.text).toContain(`the chain of follow-ups of task ${id} is invalid`);
      }

      await promptWhenIdle(
        parent,
        call("bg_delegate", { name: "more", previousTaskId: second, prompt: `More? ${script({ text: "x" })}` }),
      );
      const refused = lastToolResult(parent.messages(), "bg_delegate");
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^\[follow_up_chain_invalid\]/);
      expect(refused.text).toContain(`previous task ${second}`);

      const show = await runCli(cwd, "show", second);
      expect(show.stdout).toContain("follow_up_chain_invalid");
      expect(show.stdout).toContain(`task ${second}`);
      const list = await runCli(cwd, "list", "--all");
      expect(list.code).toBe(0);
      expect(list.stdout).toContain(first);
      expect(list.stdout).toContain(second);
      const prune = await runCli(cwd, "prune", "--keep", "0");
      expect(prune.code).toBe(0);
    } finally {
      await parent.dispose();
    }
  });
});

describe("a follow-up of a task that spilled a read", () => {
  it("lets its child read the previous task's spill file, and its citation of those lines is counted", async () => {
    const lines = Array.from({ length: 400 }, (_, i) =>
      `line ${String(i + 1).padStart(4, "0")} of the big file`.padEnd(99, "."),
    );
    // The first child reads the 40 KB file under a spend cap (so it is spilled, as in
    // structured-evidence.test.ts) and answers without reading it back; the follow-up's child reads
    // the first 1,000 bytes of that spill (lines 1-10) and cites line 3.
    const reported = { prompt_tokens: 20_000, completion_tokens: 50 };
    installParentDriver(server, (req: ModelRequest) => {
      const at = req.messages.map((m) => m.role).lastIndexOf("user");
      const ask = req.messages[at]?.text ?? "";
      const turn = req.messages.slice(at + 1).filter((m) => m.role === "assistant").length;
      if (ask.includes("SPILL-FIRST")) {
        if (turn === 0) return { toolCalls: [{ name: "read", args: { path: "big.txt" } }], usage: reported };
        return { text: "It is a big file; I did not read it back.", usage: reported };
      }
      if (ask.includes("SPILL-FOLLOW")) {
        if (turn === 1) return { text: "Line 3 is the third line: big.txt:3.", usage: reported };
        const receipt = req.messages.find((m) => m.role === "tool" && m.text.includes("[delegate spill]"))?.text ?? "";
        const artifact = /"artifact":"(spill\/[^"]+)"/.exec(receipt)?.[1] ?? "none";
        return { toolCalls: [{ name: "delegate_read_artifact", args: { artifact, offset: 0, length: 1000 } }] };
      }
      return undefined;
    });
    const cwd = await makeTempDir("chain-spill");
    await writeFile(join(cwd, "big.txt"), `${lines.join("\n")}\n`);
    await withSdkParent({ agentDir: priced, cwd }, async (parent) => {
      const route = pricedRoute(PRICED_MODEL);
      const first = await ended(parent, { name: "big", prompt: "Read big.txt. SPILL-FIRST", route, maxCostUsd: 0.09 });
      const firstResult = JSON.parse(
        readFileSync(join(taskDirOf(cwd, parent, first), TASK_FILES.result), "utf8"),
      ) as DelegateResultFile;
      const spilled = firstResult.spilled_artifacts[0];
      expect(spilled?.tool_name).toBe("read");

      const second = await ended(parent, { name: "line 3", previousTaskId: first, prompt: "Line 3? SPILL-FOLLOW" });
      const secondDir = taskDirOf(cwd, parent, second);
      const result = JSON.parse(readFileSync(join(secondDir, TASK_FILES.result), "utf8")) as DelegateResultFile;
      const row = result.evidence.find((r) => r.tool === "delegate_read_artifact") as ArtifactEvidence | undefined;
      expect(row?.path).toBe(spilled?.artifact);
      expect(row?.seen?.map((r) => [r.file, r.line_start, r.line_end])).toEqual([["big.txt", 1, 10]]);

      const view = await bgResultVia(parent, { taskId: second });
      expect(view.isError).toBe(false);
      expect(view.details?.evidence_check).toMatchObject({
        freshness: { state: "fresh" },
        citations: { total: 1, read: 1 },
      });
      // What let the follow-up's child see those lines: the spill's file range, committed with its receipt.
      expect(spilled?.read).toMatchObject({ file: "big.txt", line_start: 1, line_end: 400 });
    });
  });
});
