/**
 * Figure 3: the parent's verification of a committed 4 MiB answer — verifyDelegateResult over the
 * result.json bytes, every step of docs/subsystems/retrieval.md "Verification order" including the
 * canonical-form check — divided
 * by the least any reader must do with the same answer: base64-decode its blocks and hash the
 * bytes once with SHA-256. Both run in this process on bytes already in memory (no file I/O), after
 * warm-up runs; the answer is English text with some multi-byte UTF-8, so step 9 takes the full
 * UTF-8 decoder path rather than the ASCII shortcut.
 */
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createJiti } from "jiti";
import { figure, msSummary } from "../stats.mjs";

const jiti = createJiti(import.meta.url);

const LINES = [
  "The session cache is invalidated in src/auth.js:25 after every credential change — except one.\n",
  "Passwords are re-hashed with the user's salt; the résumé of each change is kept for 30 days.\n",
  "Evidence: grep found 7 invalidation sites and 3 hash writes; the read of auth.js confirms it.\n",
];

function answerOf(bytes) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = LINES[i % LINES.length];
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  // Trim to exactly `bytes` on a character boundary (the filler's last line is ASCII-safe to cut).
  let text = parts.join("");
  while (Buffer.byteLength(text) > bytes) text = text.slice(0, -1);
  return Buffer.from(text.padEnd(text.length + (bytes - Buffer.byteLength(text)), "."), "utf8");
}

export async function verifyFigure({ answerBytes, reps, warmups = 3, log }) {
  const { packAnswer } = await jiti.import("../../../src/core/answer.ts");
  const { canonicalJsonLine } = await jiti.import("../../../src/core/canonical.ts");
  const { SCHEMA } = await jiti.import("../../../src/core/constants.ts");
  const { verifyDelegateResult } = await jiti.import("../../../src/verify/delegate-result.ts");
  const answer = answerOf(answerBytes);
  const expected = {
    taskId: "d0123456789abcdef0123456789abcdef",
    launchNonce: "9f86d081884c7d659a2feaa0c55ad015",
    seedSha256: createHash("sha256").update("bench seed").digest("hex"),
    route: { provider: "bench", model: "bench-model" },
  };
  const result = {
    schema_version: SCHEMA.result,
    task_id: expected.taskId,
    launch_nonce: expected.launchNonce,
    seed_sha256: expected.seedSha256,
    route: { ...expected.route },
    route_attestations: [{ ...expected.route, stop_reason: "stop" }],
    answer: packAnswer(answer),
    turns: 3,
    tool_calls: 4,
    usage: {
      status: "observed",
      input: 120_000,
      output: 1_100_000,
      cache_read: 0,
      cache_write: 0,
      total_tokens: 1_220_000,
      cost_total: 0,
    },
    spilled_artifacts: [],
    evidence: [],
    finalized_by_runway: false,
    finalized_by: null,
  };
  const bytes = Buffer.from(canonicalJsonLine(result), "utf8");
  const blocks = result.answer.blocks.map((b) => b.data_base64);
  log(
    `figure 3: verify a ${answer.length}-byte answer (result.json ${bytes.length} B), ${reps} runs (+${warmups} warm-up)`,
  );

  const verifyOnce = () => {
    const t0 = performance.now();
    const verified = verifyDelegateResult(bytes, expected);
    const t1 = performance.now();
    if (!verified.answerBytes.equals(answer)) throw new Error("verification returned other bytes than were packed");
    return t1 - t0;
  };
  const baselineOnce = () => {
    const t0 = performance.now();
    const hash = createHash("sha256");
    for (const data of blocks) hash.update(Buffer.from(data, "base64"));
    const digest = hash.digest("hex");
    const t1 = performance.now();
    if (digest !== result.answer.sha256) throw new Error("baseline hash differs from the packed answer's");
    return t1 - t0;
  };
  for (let i = 0; i < warmups; i++) {
    verifyOnce();
    baselineOnce();
  }
  const verifyMs = [];
  const baseMs = [];
  const ratios = [];
  for (let rep = 0; rep < reps; rep++) {
    // Alternate which side runs first, so GC debt of one is not always paid by the other.
    let v;
    let b;
    if (rep % 2 === 0) {
      v = verifyOnce();
      b = baselineOnce();
    } else {
      b = baselineOnce();
      v = verifyOnce();
    }
    verifyMs.push(v);
    baseMs.push(b);
    ratios.push(v / b);
  }
  return figure({
    id: "verify_answer",
    title: `Verify a ${answerBytes / (1 << 20)} MiB committed answer ÷ base64 decode + SHA-256`,
    unit: "×",
    samples: ratios,
    target: 3,
    params: { answer_bytes: answer.length, result_json_bytes: bytes.length, blocks: blocks.length },
    detail: { verify_ms: msSummary(verifyMs), baseline_ms: msSummary(baseMs) },
  });
}
