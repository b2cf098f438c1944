/**
 * What the bundled scripted model says in the offline demo, for the parent and for the child.
 *
 * Both talk to the same server. A child's request is recognised by the `<<<DIRECTIVE` fence of its
 * first user message (the package frames every child prompt that way); everything else is the
 * parent. Each side is keyed on how many assistant messages its conversation already holds, so the
 * model is stateless and a retried request gets the same reply.
 *
 * The child's answer is built from what its tools actually returned (grep lines, the file it read),
 * so the demo shows real evidence gathered by a real read-only child, not canned text.
 */

import { assistantsAfter } from "../scripted-agent.mjs";
import { DEMO_MODEL_B, fusionChildReply, fusionParentReply } from "./scripted-fusion.mjs";

export const DEMO_PROVIDER = "demo";
export const DEMO_MODEL = "demo-model";

export const DEMO_TASK_NAME = "session cache audit";
export const DEMO_INVESTIGATION =
  "Audit the session cache of this project, read-only: list every place it is invalidated (file:line), every place " +
  "a password hash is written, and name any credential change that leaves existing sessions valid.";
export const DEMO_USER_PROMPT =
  "Hand this to a background delegate with bg_delegate, then wait for its completion notification and fetch the " +
  `verified answer with bg_result: ${DEMO_INVESTIGATION}`;
/** `npm run demo -- --fusion`: the same audit asked of two scripted models at once. */
export const DEMO_FUSION_USER_PROMPT =
  "Ask two models the same question with bg_fusion, then wait for its completion notification and fetch the " +
  `merged, attributed answer with bg_result: ${DEMO_INVESTIGATION}`;

const INVALIDATE = "sessionCache.invalidate(";
const HASH_WRITE = "passwordHash = ";
const TASK_ID = /\b(d[0-9a-f]{32})\b/;

/** `file:line: text` rows of a grep tool result. */
function grepRows(text) {
  return text
    .split("\n")
    .map((line) => /^(.+?):(\d+): (.*)$/.exec(line))
    .filter(Boolean)
    .map(([, file, line, code]) => ({ file, line: Number(line), code: code.trim() }));
}

/** Tool results of this conversation by the name and first argument of the call they answer. */
function toolResults(messages) {
  const calls = new Map();
  for (const m of messages) for (const call of m.toolCalls ?? []) calls.set(call.id, call);
  const results = [];
  for (const m of messages) {
    if (m.role !== "tool") continue;
    const call = calls.get(m.toolCallId);
    let args = {};
    try {
      args = JSON.parse(call?.arguments || "{}");
    } catch {
      // unparseable arguments: matched by name only
    }
    results.push({ name: call?.name, args, text: m.text });
  }
  return results;
}

/** The name of the function enclosing `line` (1-based) of a file's text, if one is declared above it. */
function enclosingFunction(fileText, line) {
  const lines = fileText.split("\n").slice(0, line);
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /function\s+([A-Za-z0-9_$]+)/.exec(lines[i] ?? "");
    if (match) return match[1];
  }
  return undefined;
}

function childAnswer(messages) {
  const results = toolResults(messages);
  const invalidations = grepRows(results.find((r) => r.args.pattern === INVALIDATE)?.text ?? "");
  const hashWrites = grepRows(results.find((r) => r.args.pattern === HASH_WRITE)?.text ?? "");
  const authSource = results.find((r) => r.name === "read")?.text ?? "";
  // A hash write with no invalidation of the same file within the next three lines leaves old sessions alive.
  const unsafe = hashWrites.filter(
    (w) => !invalidations.some((i) => i.file === w.file && i.line > w.line && i.line <= w.line + 3),
  );
  const row = (r) => `- ${r.file}:${r.line}  ${r.code}`;
  const lines = [
    "Session cache audit (read-only; every line below comes from grep/read in this project).",
    "",
    `Invalidation sites (grep "${INVALIDATE}"), ${invalidations.length}:`,
    ...invalidations.map(row),
    "",
    `Password hash writes (grep "${HASH_WRITE}"), ${hashWrites.length}:`,
    ...hashWrites.map(row),
    "",
  ];
  if (unsafe.length === 0) lines.push("Finding: every password hash write is followed by an invalidation.");
  for (const w of unsafe) {
    const fn = w.file.endsWith("auth.js") ? enclosingFunction(authSource, w.line) : undefined;
    lines.push(
      `Finding: ${w.file}:${w.line}${fn ? ` (${fn})` : ""} writes a new password hash but never calls ${INVALIDATE}userId), ` +
        "so sessions opened before a password change stay valid until they expire.",
      `Fix: call ${INVALIDATE}userId) right after that write, as the other credential changes do.`,
    );
  }
  return lines.join("\n");
}

function childReply(messages, directiveIndex) {
  const turn = assistantsAfter(messages, directiveIndex);
  if (turn === 0) {
    return {
      toolCalls: [
        // Source files only: with pi's `--hidden` grep the project's .pi/ tree (this very session) would match too.
        { name: "grep", args: { pattern: INVALIDATE, literal: true, glob: "*.js" } },
        { name: "grep", args: { pattern: HASH_WRITE, literal: true, glob: "*.js" } },
      ],
    };
  }
  if (turn === 1) return { toolCalls: [{ name: "read", args: { path: "src/auth.js" } }] };
  return { text: childAnswer(messages) };
}

function parentReply(messages) {
  const turn = assistantsAfter(messages, -1);
  if (turn === 0) {
    return { toolCalls: [{ name: "bg_delegate", args: { name: DEMO_TASK_NAME, prompt: DEMO_INVESTIGATION } }] };
  }
  if (turn === 1) return { text: "Delegated. I will wait for the completion notification instead of polling." };
  if (turn === 2) {
    // Woken by the notification: retrieve the task it names (newest mention first).
    const taskId = [...messages]
      .reverse()
      .map((m) => TASK_ID.exec(m.text)?.[1])
      .find(Boolean);
    if (!taskId) throw new Error("no task id in the parent's conversation to call bg_result with");
    return { toolCalls: [{ name: "bg_result", args: { taskId } }] };
  }
  const finding = messages
    .at(-1)
    ?.text.split("\n")
    .find((line) => line.startsWith("Finding:"));
  return { text: `The delegate's verified answer is above. ${finding ?? "It reported no finding."}` };
}

/** The model's decision for one request (see model-server.mjs); a Fusion demo's requests go to scripted-fusion.mjs. */
export function decide(request) {
  const { messages } = request;
  const directiveIndex = messages.findIndex((m) => m.role === "user" && m.text.includes("<<<DIRECTIVE"));
  if (directiveIndex === -1) {
    const fusion = messages.some((m) => m.role === "user" && m.text === DEMO_FUSION_USER_PROMPT);
    if (!fusion) return parentReply(messages);
    const candidates = [DEMO_MODEL, DEMO_MODEL_B].map((model) => ({ provider: DEMO_PROVIDER, model }));
    return fusionParentReply(messages, { candidates, investigation: DEMO_INVESTIGATION });
  }
  return fusionChildReply(request, directiveIndex) ?? childReply(messages, directiveIndex);
}
