import type { DeliveryMode } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { type DelegateRetrieval, retrieveDelegate } from "./retrieve.ts";
import { resolveTaskRef } from "./store.ts";

export interface Retrieval {
  text: string;
  details: DelegateRetrieval["details"] | Record<string, unknown>;
}

/** bg_result's dispatch: resolve the id in the project's tree, then the delegate or Fusion path. */
export function retrieveTask(
  cwd: string,
  args: { taskId: string; delivery: DeliveryMode | undefined },
  known: ReadonlyMap<string, string>,
): Retrieval {
  const ref = resolveTaskRef(cwd, args.taskId, known);
  if (ref.kind === "delegate") return retrieveDelegate(ref.dir, args.delivery);
  throw new DelegateError("task_unknown", `Fusion retrieval for ${ref.id} is not wired yet`);
}
