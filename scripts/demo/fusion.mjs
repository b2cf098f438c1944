/**
 * The offline Fusion demo (`npm run demo -- --fusion`): the parent calls bg_fusion with two scripted
 * candidate models that answer differently, is woken by the run's one notification, calls bg_result,
 * and the demo prints the receipt, the notice, the verified merged answer with its agreement section,
 * the run directory, and checks merged.md's sha256 against manifest.json itself.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isToolResult, messageOf, textOf } from "./parent.mjs";
import { artifactTree, section, sha256 } from "./report.mjs";

const NOTIFICATION = "background-task-notification";

/** The merged answer's three hashes: the bytes on disk, bg_result's view, the manifest's binding. */
function mergedCheck(view, runDir) {
  const manifest = JSON.parse(readFileSync(join(runDir, "manifest.json"), "utf8"));
  const binding = manifest.artifacts.find((a) => a.path === "merged.md");
  const onDisk = sha256(readFileSync(join(runDir, "merged.md")));
  const lines = [
    `sha256 of merged.md:                  ${onDisk}`,
    `bg_result details answer.sha256:      ${view.answer.sha256}`,
    `manifest.json binding of merged.md:   ${binding?.sha256}`,
    `The run bound ${manifest.artifacts.length} files: ${manifest.artifacts.map((a) => a.path).join(", ")}.`,
  ];
  if (onDisk !== view.answer.sha256 || onDisk !== binding?.sha256)
    throw new Error(`merged.md hash mismatch:\n${lines.join("\n")}`);
  lines.push("All three agree: the answer printed is byte for byte the one the run committed.");
  return lines.join("\n");
}

export async function runFusionDemo({ parent, prompt, cwd, progress, turnWaitMs }) {
  section("PROMPT TO THE PARENT", prompt);
  parent.client.onEvent((event) => {
    if (event.type === "tool_execution_start") progress(`parent calls ${event.toolName}`);
    if (event.type === "tool_execution_end" && event.isError) progress(`${event.toolName} returned an error`);
    if (event.type === "agent_end") progress("parent turn ended");
  });
  await parent.client.prompt(prompt);

  const receiptEvent = await parent.waitFor((e) => isToolResult(e, "bg_fusion") || e.type === "agent_end", {
    timeoutMs: turnWaitMs,
    what: "the parent to call bg_fusion",
  });
  const receiptMessage = messageOf(receiptEvent);
  if (!isToolResult(receiptEvent, "bg_fusion") || receiptMessage.isError) {
    throw new Error(`bg_fusion was not started: ${textOf(receiptMessage ?? {})}`);
  }
  section("RECEIPT (bg_fusion result)", textOf(receiptMessage));
  const receipt = receiptMessage.details;
  const runDir = receipt.artifact_dir;

  const notified = await parent.waitFor(
    (e) =>
      messageOf(e)?.role === "custom" &&
      messageOf(e).customType === NOTIFICATION &&
      messageOf(e).details?.taskId === receipt.run_id,
    { from: parent.events.indexOf(receiptEvent), timeoutMs: 120_000, what: "the run's notification" },
  );
  const notification = messageOf(notified);
  section(`NOTIFICATION (custom message "${NOTIFICATION}")`, textOf(notification));
  if (notification.details?.state !== "completed") {
    throw new Error(`the run ended ${notification.details?.state} [${notification.details?.code}]`);
  }

  const retrieved = await parent.waitFor(
    (e) => (isToolResult(e, "bg_result") && !messageOf(e).isError) || e.type === "agent_end",
    { from: parent.events.indexOf(notified), timeoutMs: turnWaitMs, what: "the parent to call bg_result" },
  );
  const view = messageOf(retrieved)?.details;
  if (!isToolResult(retrieved, "bg_result") || view?.state !== "completed" || view?.run_id !== receipt.run_id) {
    throw new Error("the parent did not retrieve the verified merged answer");
  }
  section("VERIFIED MERGED ANSWER (bg_result result)", textOf(messageOf(retrieved)));
  const ended = await parent.waitFor((e) => e.type === "agent_end", {
    from: parent.events.indexOf(retrieved),
    timeoutMs: turnWaitMs,
    what: "the parent's final reply",
  });
  const last = [...(ended.messages ?? [])].reverse().find((m) => m.role === "assistant");
  section("PARENT'S FINAL REPLY", textOf(last ?? {}) || "(empty)");
  section("RUN DIRECTORY", artifactTree(runDir, cwd));
  section("CHECK", mergedCheck(view, runDir));
}
