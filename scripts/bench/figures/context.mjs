/**
 * Figure 6: what the parent's context pays, in bytes of text the model reads: the receipt, the
 * completion notification (without an autoDelivered answer), the running view, and a delegate
 * failure view (its artifact paths not counted). The views come from real runs of the other
 * figures (views.mjs collects them); this adds one delegate whose provider fails (HTTP 500, retries
 * off → child_provider_error), so the failure views include a provider failure as well as the
 * cancellations of figure 1.
 */
import { childWork, parentPrompt } from "../scripted.mjs";
import { notificationEvents, startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure } from "../stats.mjs";

async function providerFailure(ws, collect) {
  const cwd = ws.project("context");
  const parent = await startSdkParent(ws, { cwd });
  try {
    const work = childWork({ fail: true }, "Investigate (the provider will fail)");
    const mark = parent.events.length;
    await parent.prompt(
      parentPrompt([
        [{ name: "bg_delegate", args: { name: "provider failure", prompt: work.prompt, triggerOnCompletion: false } }],
      ]),
    );
    const [receipt] = toolEnds(parent.events, "bg_delegate", mark);
    if (!receipt || receipt.isError) throw new Error(`bg_delegate refused: ${textOf(receipt?.result?.content)}`);
    const taskId = receipt.result.details.task_id;
    const note = await parent.waitFor(
      (e) => notificationEvents([e]).length === 1 && e.message.details?.taskId === taskId,
      "the failure notification",
    );
    collect.notification(textOf(note.message.content));
    const from = parent.events.length;
    await parent.prompt(parentPrompt([[{ name: "bg_result", args: { taskId } }]]));
    const [view] = toolEnds(parent.events, "bg_result", from);
    if (!view?.isError) throw new Error(`expected a failure view, got: ${textOf(view?.result?.content)}`);
    collect.failure(textOf(view.result.content));
    return note.message.details.code;
  } finally {
    await parent.dispose();
  }
}

export async function contextFigures(ws, { collect, log }) {
  log("figure 6: a delegate whose provider fails, for its notification and failure view");
  const failureCode = await providerFailure(ws, collect);
  const { views } = collect;
  const row = (id, title, list, target, notes = []) =>
    figure({
      id,
      title,
      unit: "B",
      digits: 0,
      samples: list.map((v) => v.bytes),
      target,
      detail: { largest_text: list.reduce((a, b) => (b.bytes > (a?.bytes ?? -1) ? b : a), undefined)?.text ?? null },
      notes,
    });
  return [
    row("context_receipt", "Receipt text", views.receipt, 700),
    row("context_notification", "Notification text", views.notification, 500),
    row("context_running_view", "Running view text", views.running, 300),
    row("context_failure_view", "Failure view text (paths not counted)", views.failure, 1024, [
      `codes seen: child_cancelled (figure 1), ${failureCode}`,
    ]),
  ];
}
