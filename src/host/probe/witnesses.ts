/**
 * The host probe's planted witnesses (docs/configuration.md, "Self-proof"): for every flag that
 * turns something off in a delegate child (src/host/probe-checks.ts, CHILD_OFF_FLAGS), something of
 * that kind in the probe's own agent dir and project that shows when it reaches the child. An
 * extension and an MCP server write a file when they run; a skill, a prompt template, a context file
 * and an APPEND_SYSTEM.md carry a marker that the scripted model server (requests) or the probe
 * extension (the host's command list) would see. The project's extension is also the witness of
 * project trust: Pi 1.x loads it only for a trusted project, so in the ambient run (extensions on,
 * --no-approve) it must not load. All of it lives in the probe's temporary directory.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export type WitnessKind = "skill" | "prompt" | "context" | "append";
export type Scope = "agent" | "project";

export interface Witnesses {
  /** One unique text per kind and scope, e.g. `PROBE-WITNESS-skill-agent-<hex>`. */
  markers: Readonly<Record<WitnessKind, Readonly<Record<Scope, string>>>>;
  /** The files a planted MCP server writes when it runs, by scope; an extension adds `-<run>`. */
  ranFiles: Readonly<Record<"extension" | "mcp", Readonly<Record<Scope, string>>>>;
}

/** The probe runs that get --no-extensions (the sigterm run is an ambient child). */
const ISOLATED_RUNS = ["main", "input"];
/** The probe run that loads extensions, as an ambient delegate child does. */
const AMBIENT_RUN = "sigterm";

/** What the witnesses showed after the runs: which ran files exist. */
export interface WitnessSeen {
  markers: Witnesses["markers"];
  /** Scopes whose planted extension ran in a run with --no-extensions (main, input). */
  extensionRan: Scope[];
  /** Scopes whose planted extension ran in the ambient run (no --no-extensions): project trust shows here. */
  ambientExtensionRan: Scope[];
  /** Scopes whose planted MCP server ran (in any run). */
  mcpRan: Scope[];
  /** The host's own off flags (--no-mcp, --no-approve where it has them). */
  hostFlags: readonly string[];
}

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

export const SCOPES: readonly Scope[] = ["agent", "project"];

/**
 * Plant every witness: `agentDir` is the probe's PI_CODING_AGENT_DIR, `project` its cwd, `nodePath`
 * the Node an MCP server would be started with. Returns what to look for.
 */
export function plantWitnesses(root: string, agentDir: string, project: string, nodePath: string): Witnesses {
  const id = randomBytes(6).toString("hex");
  const marker = (kind: WitnessKind, scope: Scope) => `PROBE-WITNESS-${kind}-${scope}-${id}`;
  const base: Record<Scope, string> = { agent: agentDir, project: join(project, ".pi") };
  const ranFiles = {
    extension: { agent: join(root, "ran-extension-agent"), project: join(root, "ran-extension-project") },
    mcp: { agent: join(root, "ran-mcp-agent"), project: join(root, "ran-mcp-project") },
  };
  for (const scope of SCOPES) {
    const dir = base[scope];
    const name = `probe-witness-${scope}`;
    put(
      join(dir, "extensions", `${name}.ts`),
      `import { writeFileSync } from "node:fs";\nexport default function witness() {\n  writeFileSync(${JSON.stringify(`${ranFiles.extension[scope]}-`)} + process.env.PI_BG_DELEGATE_PROBE_MODE, "ran");\n}\n`,
    );
    put(
      join(dir, "skills", name, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${marker("skill", scope)}\n---\n\n${marker("skill", scope)}\n`,
    );
    put(
      join(dir, "prompts", `${name}.md`),
      `---\ndescription: ${marker("prompt", scope)}\n---\n${marker("prompt", scope)}\n`,
    );
    const server = {
      command: nodePath,
      args: ["-e", `require("node:fs").writeFileSync(${JSON.stringify(ranFiles.mcp[scope])}, "ran")`],
    };
    put(join(dir, "mcp.json"), `${JSON.stringify({ mcpServers: { [name]: server } })}\n`);
  }
  put(join(agentDir, "AGENTS.md"), `${marker("context", "agent")}\n`);
  put(join(project, "AGENTS.md"), `${marker("context", "project")}\n`);
  // 0.73.1 reads the project's file, else the agent dir's; 1.x the project's only for a trusted project.
  put(join(agentDir, "APPEND_SYSTEM.md"), `${marker("append", "agent")}\n`);
  put(join(project, ".pi", "APPEND_SYSTEM.md"), `${marker("append", "project")}\n`);
  const both = (kind: WitnessKind) => ({ agent: marker(kind, "agent"), project: marker(kind, "project") });
  return {
    markers: {
      skill: both("skill"),
      prompt: both("prompt"),
      context: both("context"),
      append: both("append"),
    },
    ranFiles,
  };
}

/** Which planted extensions and MCP servers ran. */
export function witnessesSeen(witnesses: Witnesses, hostFlags: readonly string[]): WitnessSeen {
  const { extension, mcp } = witnesses.ranFiles;
  return {
    markers: witnesses.markers,
    extensionRan: SCOPES.filter((scope) => ISOLATED_RUNS.some((run) => existsSync(`${extension[scope]}-${run}`))),
    ambientExtensionRan: SCOPES.filter((scope) => existsSync(`${extension[scope]}-${AMBIENT_RUN}`)),
    mcpRan: SCOPES.filter((scope) => existsSync(mcp[scope])),
    hostFlags,
  };
}
