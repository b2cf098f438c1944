/**
 * A real pi loads this package through its package.json manifest, and the model is offered both
 * tools with exactly the documented parameters. The reference is test/fixtures/tool-contracts.json,
 * written by hand from the spec tables — never our own schema object. Descriptions are ours, so
 * they are only required to be non-empty.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import {
  createAgentDir,
  findProcesses,
  HOST,
  type ModelRequest,
  makeTempDir,
  PI_CLI_PATH,
  REPO_ROOT,
  type RpcMessage,
  type RpcParent,
  startRpcParent,
  startSdkParent,
  type ToolSchema,
  useAgentDir,
  useModelServer,
} from "../helpers/pi-parent.ts";

type Schema = { [key: string]: unknown };
const TOOLS = ["bg_delegate", "bg_result", "bg_fusion", "bg_steer"] as const;
const contracts = JSON.parse(await readFile(join(REPO_ROOT, "test/fixtures/tool-contracts.json"), "utf8")) as Record<
  (typeof TOOLS)[number],
  Schema
>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The structure of a JSON schema: descriptions dropped, `required` and `enum` as sorted sets. */
function structure(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structure);
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "description" || key.startsWith("$")) continue;
    if ((key === "required" || key === "enum") && Array.isArray(value)) out[key] = [...value].sort();
    else if (key === "properties" && isSchema(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, prop]) => [name, structure(prop)]));
    } else out[key] = structure(value);
  }
  return out;
}

/** Paths of properties (at any depth) that lack a non-empty description. */
function undescribed(schema: unknown, path = ""): string[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  return Object.entries(schema.properties).flatMap(([name, prop]) => {
    const here = path ? `${path}.${name}` : name;
    const ok = isSchema(prop) && typeof prop.description === "string" && prop.description.trim().length > 0;
    return [...(ok ? [] : [here]), ...undescribed(prop, here)];
  });
}

function offered(request: ModelRequest, name: string): ToolSchema {
  const tool = request.toolSchemas.find((t) => t.name === name);
  if (!tool) throw new Error(`${name} was not offered; offered: ${request.tools.join(", ")}`);
  return tool;
}

function expectDocumentedContract(request: ModelRequest): void {
  for (const name of TOOLS) {
    const tool = offered(request, name);
    expect(tool.description.trim(), `${name} description`).not.toBe("");
    expect(structure(tool.parameters), `${name} parameters`).toEqual(structure(contracts[name]));
    expect(undescribed(tool.parameters), `${name} fields without a description`).toEqual([]);
  }
}

const server = useModelServer();
const agentDir = useAgentDir(server);
const cwd = await makeTempDir("package-load");

describe("the fixture itself", () => {
  it("matches the field lists the docs pages generate from the loaded code (a typo in either fails)", async () => {
    for (const [tool, file] of [
      ["bg_delegate", "bg_delegate.md"],
      ["bg_result", "bg_result.md"],
    ] as const) {
      // The arguments' table: the page up to the structured result's table (the tool's outputSchema).
      const whole = await readFile(join(REPO_ROOT, "docs", "tools", file), "utf8");
      const page = whole.slice(0, whole.indexOf("Structured result (`outputSchema`"));
      const rows = [...page.matchAll(/^\| `([A-Za-z.]+)` \| (yes|no) \| `(\w+)` \|/gm)].map((m) => ({
        field: m[1] as string,
        required: m[2] === "yes",
        type: m[3] as string,
      }));
      expect(rows.length).toBeGreaterThanOrEqual(2);
      const root = contracts[tool];
      const props = root.properties as Record<string, Schema>;
      const fixtureRows = Object.entries(props).flatMap(([field, prop]) => {
        const nested = isSchema(prop.properties) ? (prop.properties as Record<string, Schema>) : {};
        const requiredHere = (root.required as string[]).includes(field);
        return [
          { field, required: requiredHere, type: prop.type as string },
          ...Object.entries(nested).map(([sub, subProp]) => ({
            field: `${field}.${sub}`,
            required: (prop.required as string[]).includes(sub),
            type: subProp.type as string,
          })),
        ];
      });
      const byField = (a: { field: string }, b: { field: string }) => a.field.localeCompare(b.field);
      expect(fixtureRows.sort(byField)).toEqual(rows.sort(byField));
    }
  });
});

describe("a real pi process loads the package through package.json", () => {
  it("has nothing but the manifest to find the entry by (no index.ts/index.js, no extensions/ dir)", async () => {
    const manifest = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
    expect(manifest.pi).toEqual({ extensions: ["./src/extension.ts"] });
    expect(manifest.keywords).toContain("pi-package");
    for (const conventional of ["index.ts", "index.js", "extensions"]) {
      expect(existsSync(join(REPO_ROOT, conventional)), conventional).toBe(false);
    }
  });

  it("`pi -e <package dir>` offers all four tools with the documented parameters; our argument check runs first", async () => {
    server.setHandler((request) => {
      const last = request.messages.at(-1);
      if (last?.role === "user" && last.text === "call both badly") {
        return {
          toolCalls: [
            { name: "bg_delegate", args: { name: "probe", prompt: "look", maxTurns: "45" } },
            { name: "bg_result", args: { taskId: "   " } },
          ],
        };
      }
      return { text: "ok" };
    });
    const parent = await startRpcParent({ agentDir, cwd, load: "cli" });
    try {
      // Positive control for the leftover check below: the live parent is found by its agent dir.
      expect((await findProcesses(agentDir.dir, { includeEnv: true })).map((p) => p.pid)).toContain(parent.pid);
      await expectOfferedOnFirstRequest(parent);

      // pi would coerce "45" to 45 before execute; our prepareArguments sees the raw value first.
      await parent.promptAndWait("call both badly");
      const results = (await parent.messages()).filter(
        (m): m is Extract<RpcMessage, { role: "toolResult" }> => m.role === "toolResult",
      );
      const text = (name: string) => {
        const result = results.find((r) => r.toolName === name);
        expect(result?.isError, `${name} isError`).toBe(true);
        return (result?.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
      };
      expect(text("bg_delegate")).toMatch(/^\[invalid_arguments\] maxTurns: must be a number, got string/);
      expect(text("bg_result")).toMatch(/^\[invalid_arguments\] taskId: must not be blank/);
    } finally {
      await parent.stop();
    }
    expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });

  it("a package listed in settings `packages` is loaded the same way", async () => {
    const settingsDir = await createAgentDir({ serverUrl: server.url });
    const parent = await startRpcParent({ agentDir: settingsDir, cwd, load: "settings" });
    try {
      expect(JSON.parse(await readFile(settingsDir.settingsPath, "utf8")).packages).toEqual([REPO_ROOT]);
      await expectOfferedOnFirstRequest(parent);
    } finally {
      await parent.stop();
    }
  });
});

/** One prompt; the model's first request must offer all four tools with the documented contract. */
async function expectOfferedOnFirstRequest(parent: RpcParent): Promise<void> {
  await parent.promptAndWait("hello");
  const first = server.requests[0];
  if (!first) throw new Error("pi made no model request");
  expectDocumentedContract(first);
}

describe("installed with the host's own `pi install`", () => {
  it("`pi install <local path>` into a fresh agent dir: all four tools load and offer the documented contract", async () => {
    const fresh = await createAgentDir({ serverUrl: server.url });
    const install = await execa(HOST.nodePath, [PI_CLI_PATH, "install", REPO_ROOT], {
      cwd,
      env: { PI_CODING_AGENT_DIR: fresh.dir, PI_OFFLINE: "1", PI_TELEMETRY: "0", PATH: HOST.pathEnv() },
      reject: false,
      all: true,
    });
    expect(install.exitCode, install.all).toBe(0);
    const settings = JSON.parse(await readFile(fresh.settingsPath, "utf8")) as { packages?: string[] };
    // pi records the path relative to the agent dir; it must name this package.
    expect(settings.packages?.map((p) => resolve(fresh.dir, p))).toEqual([REPO_ROOT]);
    const parent = await startRpcParent({ agentDir: fresh, cwd, load: "none" });
    try {
      await expectOfferedOnFirstRequest(parent);
    } finally {
      await parent.stop();
    }
  });
});

describe("an in-process SDK parent", () => {
  it("registers the same tools and offers the same contract (outside pi's typebox alias)", async () => {
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      expect(parent.toolNames()).toEqual(expect.arrayContaining([...TOOLS]));
      await parent.prompt("hello");
      const first = server.requests[0];
      if (!first) throw new Error("pi made no model request");
      expectDocumentedContract(first);
      expect(parent.extensionErrors).toEqual([]);
    } finally {
      await parent.dispose();
    }
  });
});
