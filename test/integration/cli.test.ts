import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DelegateResultFile } from "../../src/core/types.ts";
import { createRun } from "../../src/fusion/writer.ts";
import { runCli, runCliRaw, spawnCli } from "../helpers/cli.ts";
import { delegateVia, installHoldingDriver, notifications, until } from "../helpers/drive.ts";
import { buildCompletedRun, buildFailedRun, MERGED, WORKFLOW } from "../helpers/fusion-fixtures.ts";
import {
  fusionViaRpc,
  HELD_RUN_ARGS,
  heldRun,
  killOwner,
  readRunJson,
  runDirOf,
} from "../helpers/fusion-run-driver.ts";
import {
  createAgentDir,
  makeTempDir,
  script,
  startRpcParent,
  startSdkParent,
  useModelServer,
} from "../helpers/pi-parent.ts";
import { recommit } from "../helpers/result-fixtures.ts";

const server = useModelServer();

const ANSWER = "The cache is invalidated in src/cache.ts:42. ✓\n";
const HELD_ANSWER = "held answer, released by the test\n";

describe("pi-bg-delegate on task trees made by real children", () => {
  it("lists, shows, verifies, reads, waits for and cancels delegate tasks", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("cli-proj");
    writeFileSync(join(cwd, "notes.txt"), "cache notes\n");
    mkdirSync(join(cwd, ".pi"));
    // maxRunning above the default is yours to set (a project's may only lower it).
    await agentDir.updateSettings({ bgDelegate: { maxRunning: 8 } });
    const { held, forever } = installHoldingDriver(server, HELD_ANSWER);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      // The held children first: later seeds carry the scripts below, theirs must not.
      const running = await delegateVia(parent, { name: "running", prompt: "HOLD-UNTIL-RELEASED please." });
      const doomed = await delegateVia(parent, { name: "doomed", prompt: "HOLD-FOREVER please." });
      const completed = await delegateVia(parent, {
        name: "completed",
        prompt: `Read the notes. ${script({ tool: "read", args: { path: "notes.txt" } }, { text: ANSWER })}`,
      });
      const failed = await delegateVia(parent, {
        name: "failed",
        prompt: `Answer. ${script({ error: 500, message: "scripted internal error" })}`,
      });
      const tampered = await delegateVia(parent, { name: "tampered", prompt: `Answer. ${script({ text: ANSWER })}` });
      await until(() => notifications(parent.messages()).length === 3, "three notifications");
      const dirOf = (id: string) => join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), id);

      // Tamper with one committed result: a wrong aggregate hash, still canonical JSON.
      const resultPath = join(dirOf(tampered), "result.json");
      const original = JSON.parse(readFileSync(resultPath, "utf8")) as DelegateResultFile;
      writeFileSync(
        resultPath,
        recommit(original, (d) => {
          d.answer.sha256 = "0".repeat(64);
        }),
      );

      // list: every task, aligned, newest first; --json is stable.
      const list = await runCli(cwd, "list");
      expect(list.code, list.stderr).toBe(0);
      const lines = list.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^ID\s+KIND\s+STATE\s+ROUTE\s+RUN\s+COST\s+CAP\s+ANSWER\s+NAME$/);
      // Five tasks, what was verified, and the line with their total spend.
      expect(lines).toHaveLength(8);
      expect(lines.at(-2)).toBe("Verified: the rows shown.");
      expect(lines.at(-1)).toMatch(/^total spend in this project: \$\d+\.\d+ over 5 delegate tasks/);
      expect(new Set(lines.slice(1, -2).map((l) => l.indexOf("delegate"))).size).toBe(1); // aligned
      // From a subdirectory the command reads the project above it, as git finds its root.
      const below = join(cwd, "sub", "dir");
      mkdirSync(below, { recursive: true });
      const json = JSON.parse((await runCli(cwd, "list", "--json")).stdout) as {
        tasks: { id: string; state: string; code: string | null; answer_bytes: number | null }[];
      };
      const fromBelow = JSON.parse((await runCli(below, "list", "--json")).stdout) as typeof json;
      expect(fromBelow.tasks.map((t) => [t.id, t.code])).toEqual(json.tasks.map((t) => [t.id, t.code]));
      const byId = new Map(json.tasks.map((t) => [t.id, t]));
      expect(byId.get(completed)).toMatchObject({
        state: "completed",
        code: null,
        answer_bytes: Buffer.byteLength(ANSWER),
      });
      expect(byId.get(failed)).toMatchObject({ state: "failed", code: "child_provider_error", answer_bytes: null });
      expect(byId.get(tampered)).toMatchObject({
        state: "completed",
        code: "answer_hash_mismatch",
        answer_bytes: null,
      });
      expect(byId.get(running)).toMatchObject({ state: "running" });
      expect(json.tasks[0]?.id).toBe(tampered);

      // result: the verified answer, by a unique prefix; --out writes the same bytes.
      const answer = await runCli(cwd, "result", completed.slice(0, 12));
      expect(answer).toMatchObject({ code: 0, stdout: ANSWER.trimEnd() });
      const outFile = join(cwd, "answer-copy.txt");
      expect((await runCli(cwd, "result", completed, "--out", outFile)).code).toBe(0);
      expect(readFileSync(outFile, "utf8")).toBe(ANSWER);

      // show: route, attestations, evidence with bg_result's freshness check; then the file changes.
      const shown = await runCli(cwd, "show", completed);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/attestations:\s+2, all on the pinned route/);
      expect(shown.stdout).toMatch(/^finalized:?\s+no \(answered before any limit was near\)$/m);
      expect(shown.stdout).toContain("Evidence: fresh (1 file re-hashed, unchanged since read).");
      expect(shown.stdout).toContain("Citations: 0 of 1 match lines the delegate read; 1 in files it never opened");
      expect(shown.stdout).toMatch(/read\s+notes\.txt\s+1-1\s+0-12/);
      writeFileSync(join(cwd, "notes.txt"), "changed since\n");
      const facts = JSON.parse((await runCli(cwd, "show", completed, "--json")).stdout) as {
        evidence_check: { freshness: { state: string; changed: string[] } };
      };
      expect(facts.evidence_check.freshness).toMatchObject({ state: "stale", changed: ["notes.txt"] });

      // verify: every step ok on the good task (found, manifest, 0–12); the tampered one fails at
      // step 8 with its code.
      const good = await runCli(cwd, "verify", completed);
      expect(good.code).toBe(0);
      expect(good.stdout.match(/^ {2}ok {4}/gm)).toHaveLength(15);
      expect(good.stdout).toMatch(/ok {4}10\. seed\.json still holds the launched seed/);
      expect(good.stdout).toMatch(/ok {4}11\. the answer is the one recorded when the task was adjudicated/);
      const bad = await runCli(cwd, "verify", tampered);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/ok {4}7\. every block's byte length and SHA-256/);
      expect(bad.stdout).toMatch(/FAIL {2}8\. the whole answer's byte length and SHA-256/);
      expect(bad.stderr).toMatch(/^\[answer_hash_mismatch\] result\.json: the answer does not match answer\.sha256/);
      const badResult = await runCli(cwd, "result", tampered);
      expect(badResult).toMatchObject({ code: 1, stdout: "" });
      expect(badResult.stderr).toMatch(/^\[answer_hash_mismatch\]/);

      // A failed task: its typed code and remediation, no answer.
      const failedResult = await runCli(cwd, "result", failed);
      expect(failedResult).toMatchObject({ code: 1, stdout: "" });
      expect(failedResult.stderr).toMatch(/^\[child_provider_error\]/);
      expect(failedResult.stderr).toContain("Remediation: The provider failed after retries");
      expect((await runCli(cwd, "show", failed)).stdout).toMatch(/failure:\s+\[child_provider_error\]/);

      // show on a result that fails its checks: says so and exits 1.
      const shownBad = await runCli(cwd, "show", tampered);
      expect(shownBad.code).toBe(1);
      expect(shownBad.stdout).toMatch(/^state:\s+completed, but it fails verification now: \[answer_hash_mismatch\]/m);
      expect(shownBad.stderr).toMatch(/^\[answer_hash_mismatch\] /);

      // The same id rules as bg_result (the id trimmed); an option is never taken for an id.
      expect((await runCli(cwd, "show", "d")).stderr).toMatch(/^\[task_ambiguous\] 5 tasks match "d"/);
      expect((await runCli(cwd, "result", "dnope")).stderr).toMatch(/^\[task_unknown\]/);
      expect((await runCli(cwd, "show", ` ${completed} `)).code).toBe(0);
      expect((await runCli(cwd, "show", "-x")).code).toBe(2);

      // A running task: --wait runs out with a distinct status and one line; nothing is touched.
      const manifestBefore = readFileSync(join(dirOf(running), "manifest.json"));
      const timedOut = await runCli(cwd, "result", running, "--wait", "0.5");
      expect(timedOut.code, timedOut.stderr).toBe(3);
      expect(timedOut.stdout).toBe("");
      expect(timedOut.stderr.trimEnd().split("\n").at(-1)).toMatch(
        /is still running after waiting \d+s; nothing was cancelled/,
      );
      expect(readFileSync(join(dirOf(running), "manifest.json"))).toEqual(manifestBefore);
      expect((await runCli(cwd, "verify", running)).code).toBe(3);

      // ...and succeeds once the task finishes while it waits.
      const waiting = spawnCli(cwd, "result", running, "--wait", "60");
      await until(() => waiting.stderrSoFar().includes("waiting up to 60s"), "the wait to begin");
      held.release();
      expect(await waiting.done).toMatchObject({ code: 0, stdout: HELD_ANSWER.trimEnd() });

      // cancel: only a running task; the owner records child_cancelled.
      expect((await runCli(cwd, "cancel", completed)).code).toBe(4);
      const cancel = await runCli(cwd, "cancel", doomed);
      expect(cancel.code, cancel.stderr).toBe(0);
      await until(
        () => JSON.parse(readFileSync(join(dirOf(doomed), "manifest.json"), "utf8")).state !== "running",
        "the owner to record the cancel",
      );
      const cancelled = await runCli(cwd, "result", doomed);
      expect(cancelled.code).toBe(1);
      expect(cancelled.stderr).toMatch(/^\[child_cancelled\]/);
    } finally {
      held.release();
      forever.release();
      await parent.dispose();
    }
  }, 150_000); // many CLI processes and real children: ~40 s on a loaded 2-core machine

  it("reads Fusion runs made by the production writer: completed, failed, running, tampered", async () => {
    const cwd = await makeTempDir("cli-fusion");
    const completed = buildCompletedRun(cwd);
    const failed = buildFailedRun(cwd, "failed");
    const running = createRun({ cwd, workflow: WORKFLOW }); // owned by this live process
    const tampered = buildCompletedRun(cwd);
    const mergedPath = join(tampered.runDir, "merged.md");
    const bytes = readFileSync(mergedPath);
    bytes[0] = bytes[0] === 0x23 ? 0x24 : 0x23;
    writeFileSync(mergedPath, bytes);

    const json = JSON.parse((await runCli(cwd, "list", "--json")).stdout) as {
      tasks: { id: string; kind: string; state: string; code: string | null }[];
    };
    const byId = new Map(json.tasks.map((t) => [t.id, t]));
    expect(byId.get(completed.runId)).toMatchObject({ kind: "fusion", state: "completed", code: null });
    expect(byId.get(failed.runId)).toMatchObject({ state: "failed", code: "child_provider_error" });
    expect(byId.get(running.runId)).toMatchObject({ state: "running" });
    expect(byId.get(tampered.runId)).toMatchObject({ code: "answer_hash_mismatch" });

    expect(await runCli(cwd, "result", completed.runId)).toMatchObject({ code: 0, stdout: MERGED.trimEnd() });
    expect((await runCli(cwd, "verify", completed.runId)).code).toBe(0);
    const bad = await runCli(cwd, "result", tampered.runId);
    expect(bad).toMatchObject({ code: 1, stdout: "" });
    expect(bad.stderr).toMatch(/^\[answer_hash_mismatch\]/);
    const failedResult = await runCli(cwd, "result", failed.runId);
    expect(failedResult.code).toBe(1);
    expect(failedResult.stderr).toMatch(/^\[child_provider_error\]/);
    expect((await runCli(cwd, "result", running.runId, "--wait", "0")).code).toBe(3);
    expect((await runCli(cwd, "show", completed.runId)).stdout).toMatch(/workflow:\s+reason/);
    // Output meant for a person ends with a newline (an answer without one gets one on stdout, not in
    // --out) and carries none of the tools' model-facing sentences.
    const bare = buildCompletedRun(cwd, "no final newline");
    expect(await runCliRaw(cwd, "result", bare.runId)).toMatchObject({ code: 0, stdout: "no final newline\n" });
    const outFile = join(cwd, "bare.txt");
    expect((await runCliRaw(cwd, "result", bare.runId, "--out", outFile)).code).toBe(0);
    expect(readFileSync(outFile, "utf8")).toBe("no final newline");
    for (const args of [
      ["list"],
      ["show", completed.runId],
      ["verify", completed.runId],
      ["result", failed.runId],
      ["show", failed.runId],
      ["verify", failed.runId],
      ["result", "d0000"],
    ]) {
      const run = await runCliRaw(cwd, ...args);
      for (const stream of [run.stdout, run.stderr]) {
        if (stream !== "") expect(stream.endsWith("\n"), `${args.join(" ")}: ${stream}`).toBe(true);
        expect(stream).not.toMatch(/Child process created|This view carries no answer text/);
      }
    }
    // The CLI claims no usage: bg_result still reports it first (usage-claim.json is not written).
    expect(() => readFileSync(join(completed.runDir, "usage-claim.json"))).toThrow();
  });

  it("a Fusion run whose Pi was killed: list adjudicates it, result prints its view whole, prune can remove it", async () => {
    const { agentDir, cwd, held } = await heldRun(server, "cli-stranded");
    const parent = await startRpcParent({ agentDir, cwd });
    let runId = "";
    try {
      runId = await fusionViaRpc(parent, { ...HELD_RUN_ARGS, name: "stranded" });
      await until(() => held.asked() === 2, "both candidates at the model");
      await killOwner(parent, cwd);
    } finally {
      held.release();
      await parent.stop();
    }
    expect(readRunJson(cwd, runId, "manifest.json").state).toBe("running");

    // list adjudicates the run (no Pi process needed): cancelled, child_cancelled, at the candidate stage.
    const json = JSON.parse((await runCli(cwd, "list", "--json")).stdout) as {
      tasks: { id: string; kind: string; state: string; code: string | null }[];
    };
    expect(json.tasks.find((t) => t.id === runId)).toMatchObject({ state: "cancelled", code: "child_cancelled" });
    expect(readRunJson(cwd, runId, "manifest.json").state).toBe("cancelled");

    // result prints the answer-free view whole: both children, true about them, one Remediation line.
    const result = await runCli(cwd, "result", runId);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^\[child_cancelled\] Fusion run f[0-9a-f]{32} cancelled; no answer was committed/);
    expect(result.stderr).toContain("child process created: yes");
    expect(result.stderr).toMatch(/candidate\/candidate-1 #1: cancelled/);
    expect(result.stderr).toMatch(/candidate\/candidate-2 #1: cancelled/);
    expect(result.stderr.match(/^Remediation:/gm)).toHaveLength(1);

    // Its notice never reached a session: kept, until the person gives up on it.
    const kept = await runCli(cwd, "prune", "--older-than", "0");
    // Why it is kept is worded once, in test/unit/fusion-stranded.test.ts: here, that it is kept.
    expect(kept.stdout).toMatch(new RegExp(`^Kept ${runId}: `, "m"));
    expect(existsSync(runDirOf(cwd, runId))).toBe(true);
    const pruned = await runCli(cwd, "prune", "--older-than", "0", "--undelivered", "--json");
    expect(pruned.code, pruned.stderr).toBe(0);
    const removed = (JSON.parse(pruned.stdout) as { removed: { id: string; kind: string }[] }).removed;
    expect(removed.filter((r) => r.kind === "fusion").map((r) => r.id)).toEqual([runId]);
    expect(existsSync(runDirOf(cwd, runId))).toBe(false);
  });

  it("answers --help on every command and refuses a bad command line with status 2", async () => {
    const cwd = await makeTempDir("cli-help");
    for (const command of ["list", "show", "verify", "result", "cancel"]) {
      const help = await runCli(cwd, command, "--help");
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: pi-bg-delegate ${command}`);
      expect(help.stdout).toContain("Exit status:");
    }
    const missing = await runCli(cwd, "result");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("result needs a task id");
    // Every bad argument of one call, one line each, and each help lists only its own exit statuses.
    const many = await runCliRaw(cwd, "result", "a", "b", "--wait", "soon", "--all");
    expect(many.code).toBe(2);
    expect(many.stderr).toBe(
      [
        'pi-bg-delegate: --wait must be a number of seconds ≥ 0, not "soon"',
        "pi-bg-delegate: result has no option --all",
        'pi-bg-delegate: result takes one task id, got "a" and "b"',
        "See: pi-bg-delegate result --help",
        "",
      ].join("\n"),
    );
    expect((await runCli(cwd, "list", "--help")).stdout).not.toMatch(/^ {2}[34] /m);
    expect((await runCli(cwd, "frobnicate")).code).toBe(2);
  });
});
