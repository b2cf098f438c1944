import type { DeliveryMode } from "../core/constants.ts";
import { retrieveFusion } from "../fusion/index.ts";
import { isSameProcessAlive } from "../process/identity.ts";
import { resolveTaskRef } from "../store/lookup.ts";
import { type DelegateRetrieval, retrieveDelegate } from "./retrieve.ts";

export interface Retrieval {
  text: string;
  details: DelegateRetrieval["details"] | object;
}

/** bg_result's dispatch: resolve the id in the project's tree, then the delegate or Fusion path. */
export async function retrieveTask(
  cwd: string,
  args: { taskId: string; delivery: DeliveryMode | undefined },
  known: ReadonlyMap<string, string>,
): Promise<Retrieval> {
  const ref = resolveTaskRef(cwd, args.taskId, known);
  if (ref.kind === "delegate") return retrieveDelegate(ref.dir, args.delivery);
  return retrieveFusion(ref.dir, args.delivery === undefined ? {} : { delivery: args.delivery }, {
    isRunning: (manifest) => isSameProcessAlive(manifest.owner.pid, manifest.owner.start_time),
  });
}
