import type { DelegateManifest } from "../core/types.ts";
import type { ExpectedResultIdentity } from "./delegate-result.ts";

/**
 * What a task's result.json must match, from its manifest: the launch's identity and seed (whose
 * file must still hold it), and, once the parent adjudicated the task as completed, the answer it
 * recorded then, and the steering it vouched for (docs/subsystems/retrieval.md, "Verification
 * order", steps 10 to 12).
 */
export function expectedIdentity(manifest: DelegateManifest): ExpectedResultIdentity {
  const t = manifest.terminal;
  return {
    taskId: manifest.task_id,
    launchNonce: manifest.launch_nonce,
    seedSha256: manifest.seed_sha256,
    route: manifest.route,
    seedBytes: typeof manifest.seed_bytes === "number" ? manifest.seed_bytes : null,
    steering: manifest.steering ?? null,
    ...(manifest.state === "completed"
      ? { adjudicated: { answerBytes: t?.answer_bytes ?? null, answerSha256: t?.answer_sha256 ?? null } }
      : {}),
  };
}
