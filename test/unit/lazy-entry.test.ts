/**
 * The entry loads what the tools do on first use (docs/subsystems/launch.md, "Loading on first use"):
 * its static imports reach only the tools' declarations, and until the renderers load a call is drawn
 * as Pi draws one without a renderer and a notice is left to Pi.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { ExtensionAPI, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { initTheme, ToolExecutionComponent } from "@mariozechner/pi-coding-agent";
import type { TUI } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import bgDelegateExtension from "../../src/extension.ts";
import { loadRenderers } from "../../src/ui/lazy.ts";

const SRC = join(REPO_ROOT, "src");

/** The files a file loads when it is imported: static imports, type-only ones and import() left out. */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^;]*?)\s+from\s+"(\.{1,2}\/[^"]+)"/gms)) {
      const [, , typeOnly, names = "", target = ""] = m;
      if (typeOnly !== undefined) continue;
      const inner = /^\{([^}]*)\}$/s.exec(names.trim())?.[1];
      const list = inner
        ?.split(",")
        .map((n) => n.trim())
        .filter(Boolean);
      if (list !== undefined && list.length > 0 && list.every((n) => n.startsWith("type "))) continue;
      walk(resolve(dirname(file), target));
    }
  };
  walk(entry);
  return [...seen].map((f) => relative(SRC, f));
}

describe("the entry", () => {
  const closure = staticClosure(join(SRC, "extension.ts"));

  it("loads the tools' declarations and none of what they do", () => {
    expect(closure).toContain(join("arguments", "delegate-arguments.ts"));
    expect(closure).toContain(join("ui", "lazy.ts"));
    const doing = [
      "launch",
      "retrieval",
      "fusion-run",
      "fusion",
      "tasks",
      "verify",
      "store",
      "child",
      "process",
      "views",
      "cli",
    ];
    expect(closure.filter((f) => doing.includes(f.split(sep)[0] ?? ""))).toEqual([]);
    expect(closure).not.toContain("runtime.ts");
    expect(closure).not.toContain("lifetime.ts");
    expect(closure.filter((f) => f.startsWith(`ui${sep}`))).toEqual([join("ui", "lazy.ts")]);
  });

  it("draws a call by its name until the renderers load, then in full; a notice is Pi's until then", async () => {
    initTheme("dark", false);
    const tools = new Map<string, ToolDefinition>();
    let notice: ((message: unknown, options: unknown, theme: unknown) => unknown) | undefined;
    const pi = {
      registerTool: (tool: ToolDefinition) => tools.set(tool.name, tool),
      registerMessageRenderer: (_type: string, renderer: typeof notice) => {
        notice = renderer;
      },
      registerCommand: () => {},
      on: () => {},
    } as unknown as ExtensionAPI;
    bgDelegateExtension(pi);
    const tui = { requestRender: () => {} } as unknown as TUI;
    const args = { name: "map auth", prompt: "Map the auth flow." };
    const drawn = () =>
      new ToolExecutionComponent("bg_delegate", "call-1", args, undefined, tools.get("bg_delegate"), tui, REPO_ROOT)
        .render(80)
        .join("\n");
    expect(drawn()).toContain("bg_delegate");
    expect(drawn()).not.toContain("map auth");
    expect(notice?.({ content: "x", details: undefined }, { expanded: false }, {})).toBeUndefined();
    await loadRenderers();
    expect(drawn()).toContain("map auth");
    expect(notice?.({ content: "x", details: undefined }, { expanded: false }, {})).toBeDefined();
  });
});
