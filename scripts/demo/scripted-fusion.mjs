/**
 * What the bundled scripted models say in the offline Fusion demo (`npm run demo -- --fusion`).
 *
 * Two candidate models answer the same audit differently, from their own tool calls: demo-model
 * greps invalidations and password hash writes and reads src/auth.js (the delegate demo's child);
 * demo-model-b only greps the invalidations and so concludes that no credential change is missed.
 * The evaluator and the merger (on the parent's route) are recognised by the first line of their
 * directive and work from the verified answers the run hands them. Stateless, like the delegate demo.
 */

import { assistantsAfter } from "../scripted-agent.mjs";

export const DEMO_MODEL_B = "demo-model-b";
export const DEMO_FUSION_NAME = "session cache audit, two models";

const INVALIDATE = "sessionCache.invalidate(";
const RUN_ID = /\b(f[0-9a-f]{32})\b/;

/** The child's directive: its first line and the candidate answers it carries, by slot. */
function directive(text) {
  const first = /<<<DIRECTIVE utf8_bytes=\d+\n([^\n]*)/.exec(text)?.[1] ?? "";
  const answers = new Map();
  for (const m of text.matchAll(/^<<<ANSWER (candidate-\d+) utf8_bytes=\d+\n([\s\S]*?)\nANSWER \1>>>$/gm)) {
    answers.set(m[1], m[2]);
  }
  return { first, answers };
}

/** demo-model-b: one grep for invalidations, then a confident answer without the hash writes. */
function quickCandidate(messages, directiveIndex) {
  if (assistantsAfter(messages, directiveIndex) === 0) {
    return { toolCalls: [{ name: "grep", args: { pattern: INVALIDATE, literal: true, glob: "*.js" } }] };
  }
  const sites = (messages.at(-1)?.text ?? "")
    .split("\n")
    .filter((line) => /^.+?:\d+: /.test(line))
    .map((line) => `- ${line.replace(/^(.+?:\d+): (.*)$/, "$1  $2")}`);
  return {
    text: [
      `Session cache audit (quick): ${sites.length} invalidation sites (grep "${INVALIDATE}"):`,
      ...sites,
      "",
      "Finding: every credential change I found invalidates the user's sessions; no change leaves old sessions valid.",
    ].join("\n"),
  };
}

function evaluation(answers) {
  const slots = [...answers.keys()];
  const finder = slots.filter((s) => answers.get(s).includes("never calls"));
  const others = slots.filter((s) => !finder.includes(s));
  const claims = [
    {
      claim: "The session cache is invalidated at the sites listed by grep.",
      supported_by: slots,
      contradicted_by: [],
    },
  ];
  if (finder.length > 0) {
    claims.push({
      claim: "A password change (src/auth.js, changePassword) leaves existing sessions valid.",
      supported_by: finder,
      contradicted_by: others,
    });
  }
  const unique_findings = finder.map((candidate) => ({
    candidate,
    finding: "Listed every password hash write and checked each for an invalidation after it.",
  }));
  return JSON.stringify({ claims, unique_findings });
}

function merged(answers) {
  const best = [...answers.values()].find((a) => a.includes("never calls")) ?? [...answers.values()][0] ?? "";
  return [
    `Merged answer from ${answers.size} verified candidate answers.`,
    "",
    best,
    "",
    "One candidate listed the same invalidation sites but never looked at password hash writes, so it missed the",
    "password change that leaves sessions valid; the evidence (src/auth.js, read in full) favours the finding above.",
  ].join("\n");
}

/**
 * A Fusion child's reply, or undefined when the request is a candidate of the delegate demo's kind
 * (demo-model: the caller's own child script answers it).
 */
export function fusionChildReply(request, directiveIndex) {
  const { first, answers } = directive(request.messages[directiveIndex]?.text ?? "");
  if (first === "Fusion evaluation.") return { text: evaluation(answers) };
  if (first === "Fusion merge.") return { text: merged(answers) };
  if (request.model === DEMO_MODEL_B) return quickCandidate(request.messages, directiveIndex);
  return undefined;
}

/** The parent of the Fusion demo: `candidates` are its two routes, `investigation` the question. */
export function fusionParentReply(messages, { candidates, investigation }) {
  const turn = assistantsAfter(messages, -1);
  if (turn === 0) {
    return {
      toolCalls: [{ name: "bg_fusion", args: { name: DEMO_FUSION_NAME, prompt: investigation, candidates } }],
    };
  }
  if (turn === 1) return { text: "Started a Fusion run. I will wait for its notification instead of polling." };
  if (turn === 2) {
    const runId = [...messages]
      .reverse()
      .map((m) => RUN_ID.exec(m.text)?.[1])
      .find(Boolean);
    if (!runId) throw new Error("no run id in the parent's conversation to call bg_result with");
    return { toolCalls: [{ name: "bg_result", args: { taskId: runId } }] };
  }
  return { text: "The merged answer above says which model found what; the agreement section names each route." };
}
