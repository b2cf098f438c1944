import type { Theme } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
  registerNotificationRenderer,
  renderDelegateCall,
  renderResultCall,
  renderToolResult,
} from "../../src/ui/render.ts";

// A theme that marks colors and bold so the test sees what was styled, without a terminal.
const theme = {
  fg: (color: string, text: string) => `<${color}>${text}</${color}>`,
  bold: (text: string) => `*${text}*`,
} as unknown as Theme;

const lines = (component: { render(width: number): string[] }) => component.render(200).map((l) => l.trimEnd());

describe("tool renderers", () => {
  it("shows the delegate's name and an explicit route in the call line", () => {
    const out = lines(renderDelegateCall({ name: "map the cache", route: { provider: "p", model: "m" } }, theme));
    expect(out.join("\n")).toContain("<toolTitle>*bg_delegate*</toolTitle> <accent>map the cache</accent> → p/m");
  });

  it("tolerates partial arguments while the call streams", () => {
    expect(lines(renderDelegateCall(undefined, theme)).join("\n")).toContain("bg_delegate");
    expect(lines(renderResultCall({ taskId: "d12", delivery: "artifact" }, theme)).join("\n")).toContain(
      "<accent>d12</accent> (artifact)",
    );
  });

  it("collapses a result to its first line and expands to all of it", () => {
    const result = { content: [{ type: "text" as const, text: "facts line\nanswer body" }], details: {} };
    expect(lines(renderToolResult(result, { expanded: false, isPartial: false }, theme)).join("\n")).not.toContain(
      "answer body",
    );
    expect(lines(renderToolResult(result, { expanded: true, isPartial: false }, theme)).join("\n")).toContain(
      "answer body",
    );
  });
});

describe("notification renderer", () => {
  it("shows state, size and hash collapsed, and the full notice expanded", () => {
    type Renderer = (m: unknown, o: { expanded: boolean }, t: Theme) => { render(w: number): string[] };
    let registered: { type: string; renderer: Renderer } | undefined;
    const pi = {
      registerMessageRenderer: (type: string, renderer: Renderer) => {
        registered = { type, renderer };
      },
    } as unknown as Parameters<typeof registerNotificationRenderer>[0];
    registerNotificationRenderer(pi);
    expect(registered?.type).toBe("background-task-notification");
    const message = {
      role: "custom",
      customType: "background-task-notification",
      content: "Background delegate d1 (scan) completed: verified answer 12 bytes.",
      display: true,
      details: {
        taskId: "d1",
        name: "scan",
        state: "completed",
        code: null,
        answer_bytes: 12,
        answer_sha256: "ab".repeat(32),
      },
    };
    const collapsed = lines(registered!.renderer(message, { expanded: false }, theme)).join("\n");
    expect(collapsed).toContain(
      "<success>●</success> delegate <accent>scan</accent> completed · 12 bytes · sha256 abababababab…",
    );
    expect(collapsed).not.toContain("verified answer 12 bytes");
    const expanded = lines(registered!.renderer(message, { expanded: true }, theme)).join("\n");
    expect(expanded).toContain("verified answer 12 bytes");
    const failed = { ...message, details: { ...message.details, state: "failed", code: "child_timeout" } };
    expect(lines(registered!.renderer(failed, { expanded: false }, theme)).join("\n")).toContain("<error>●</error>");
  });
});
