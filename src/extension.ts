import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { CHILD_ENV } from "./core/constants.ts";
import { DelegateError } from "./core/errors.ts";
import { createBgDelegateTool } from "./tools/bg-delegate.ts";
import { createBgResultTool } from "./tools/bg-result.ts";

/** The package's one entry: registers bg_delegate, bg_result, their hooks, renderers and /delegates. */
export default function bgDelegateExtension(pi: ExtensionAPI): void {
  // Inside a delegate child this package registers nothing parent-side (the guard is loaded with -e).
  if (process.env[CHILD_ENV.marker] === "1") return;

  pi.registerTool(
    createBgDelegateTool({
      launch: async () => {
        throw new DelegateError("child_spawn_failed", "launch is not wired yet", { childProcessCreated: false });
      },
    }),
  );
  pi.registerTool(
    createBgResultTool({
      retrieve: async (args) => {
        throw new DelegateError("task_unknown", `no task matches ${args.taskId}`);
      },
    }),
  );
}
