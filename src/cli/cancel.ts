/**
 * `cancel <id>` (docs/cli.md, "cancel"): the one cancel of src/tasks/cancel.ts. This process never
 * owns a task, so it leaves a cancel request for the task's owner — only when that owner is proven to
 * be this user's live Pi process — which ends the child or the run and records child_cancelled.
 */

import { visibleLines } from "../core/terminal-text.ts";
import type { TaskRef } from "../store/lookup.ts";
import { cancelTask as cancel } from "../tasks/seam.ts";
import { EXIT } from "./args.ts";
import type { CliIo } from "./io.ts";

export function cancelTask(cli: CliIo, ref: TaskRef): number {
  // What a task tree says (ids, reasons) reaches the terminal escaped (src/core/terminal-text.ts).
  const io = {
    stdout: (text: string) => cli.stdout(visibleLines(text)),
    stderr: (text: string) => cli.stderr(visibleLines(text)),
  };
  const outcome = cancel(ref);
  switch (outcome.kind) {
    case "refused":
      io.stderr(
        outcome.running
          ? `${ref.id} was not cancelled: ${outcome.why}.\n`
          : `${ref.id} is not running (${outcome.why}); nothing was changed.\n`,
      );
      return EXIT.refused;
    case "requested":
      io.stdout(
        `Asked the Pi process that owns ${ref.id} (pid ${outcome.ownerPid}) to cancel it; ` +
          (ref.kind === "delegate"
            ? "it ends the child and records the task as cancelled (child_cancelled).\n"
            : "it ends the run's children and records the run as cancelled (child_cancelled).\n"),
      );
      return EXIT.ok;
    case "ending":
      io.stdout(`Cancelling ${ref.id}.\n`);
      return EXIT.ok;
  }
}
