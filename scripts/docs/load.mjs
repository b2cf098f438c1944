/**
 * Loads what the docs are generated from, the way Pi itself sees it:
 * - the registered tools, through pi's own extension loader (`discoverAndLoadExtensions`, which reads
 *   package.json "pi.extensions" and imports the entry with pi's jiti and pi's aliases, so
 *   `@sinclair/typebox` becomes pi's typebox 1.x exactly as in a real session);
 * - the failure tables of src/core/errors.ts, through the jiti that pi depends on.
 * Pi runs against a throw-away agent dir and cwd, so no user or project extension, setting or
 * credential is read, and nothing under ~/.pi is touched.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGE = "@mariozechner/pi-coding-agent";

/** Environment for an offline, hermetic load; returns a function that restores the old values. */
function isolateEnvironment(agentDir) {
  const overrides = {
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    // A delegate child's marker makes our entry register nothing; a session dir is irrelevant here.
    PI_BG_DELEGATE_CHILD: undefined,
    PI_CODING_AGENT_SESSION_DIR: undefined,
  };
  const saved = {};
  for (const [key, value] of Object.entries(overrides)) {
    saved[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  return () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

function declaredEntries(root) {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const entries = pkg?.pi?.extensions;
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new Error(`${join(root, "package.json")} declares no "pi.extensions" entry`);
  }
  return entries.map((entry) => resolve(root, entry));
}

/**
 * The tools the package's declared extension entries register, as pi loads them.
 * @returns {Promise<Map<string, {definition: object, extensionPath: string}>>}
 */
export async function loadRegisteredTools(root) {
  const entries = declaredEntries(root);
  const sandbox = mkdtempSync(join(tmpdir(), "pi-bg-delegate-docs-"));
  const agentDir = join(sandbox, "agent");
  const cwd = join(sandbox, "cwd");
  mkdirSync(agentDir);
  mkdirSync(cwd);
  const restore = isolateEnvironment(agentDir);
  try {
    const pi = await import(PI_PACKAGE);
    // The package root as a configured path: pi resolves it through package.json "pi.extensions",
    // the same resolution `pi install` / settings "packages" use.
    const { extensions, errors } = await pi.discoverAndLoadExtensions([root], cwd, agentDir);
    if (errors.length > 0) {
      throw new Error(`pi could not load the extension:\n${errors.map((e) => `  ${e.path}: ${e.error}`).join("\n")}`);
    }
    const tools = new Map();
    for (const extension of extensions) {
      if (!entries.includes(resolve(extension.resolvedPath))) {
        throw new Error(`pi loaded ${extension.resolvedPath}, which package.json "pi.extensions" does not declare`);
      }
      for (const [name, registered] of extension.tools) {
        if (tools.has(name)) throw new Error(`tool ${name} is registered twice`);
        tools.set(name, { definition: registered.definition, extensionPath: extension.resolvedPath });
      }
    }
    if (tools.size === 0) throw new Error("the extension registered no tools");
    return tools;
  } finally {
    restore();
    rmSync(sandbox, { recursive: true, force: true });
  }
}

/** Imports a self-contained TypeScript module of the package with the jiti pi ships. */
async function importTypeScript(file) {
  const piEntry = fileURLToPath(import.meta.resolve(PI_PACKAGE));
  const { createJiti } = createRequire(piEntry)("jiti");
  const jiti = createJiti(import.meta.url, { moduleCache: false });
  return jiti.import(file);
}

/**
 * Where each tool's argument declaration (src/arguments/tool-arguments.ts) and defaults live. Checked
 * to cover exactly the registered tools, and each declaration to name exactly the schema's fields.
 */
const ARGUMENT_DECLARATIONS = {
  bg_delegate: {
    module: "src/arguments/delegate-arguments.ts",
    schema: "DelegateArgumentsSchema",
    defaults: "DELEGATE_DEFAULTS",
  },
  bg_result: { module: "src/arguments/result-arguments.ts", schema: "ResultArgumentsSchema", defaults: undefined },
  bg_fusion: {
    module: "src/arguments/fusion-arguments.ts",
    schema: "FusionArgumentsSchema",
    defaults: "FUSION_DEFAULTS",
  },
  bg_steer: { module: "src/arguments/steer-arguments.ts", schema: "SteerArgumentsSchema", defaults: undefined },
};

function sameFields(declared, offered, path) {
  const a = Object.keys(declared?.properties ?? {}).sort();
  const b = Object.keys(offered?.properties ?? {}).sort();
  if (a.join() !== b.join()) {
    throw new Error(`${path}: the declaration has [${a.join(", ")}] but the registered schema has [${b.join(", ")}]`);
  }
  for (const name of a) {
    const field = declared.properties[name];
    if (field.type === "object") sameFields(field, offered.properties[name], `${path}.${name}`);
    if (field.type === "array") sameFields(field.items, offered.properties[name]?.items, `${path}.${name}[]`);
  }
}

/**
 * The argument declaration and defaults of every registered tool.
 * @returns {Promise<Map<string, {schema: object, defaults: object}>>}
 */
export async function loadArgumentTables(root, tools) {
  const names = [...tools.keys()].sort();
  const mapped = Object.keys(ARGUMENT_DECLARATIONS).sort();
  if (names.join() !== mapped.join()) {
    throw new Error(
      `scripts/docs/load.mjs ARGUMENT_DECLARATIONS covers [${mapped.join(", ")}] but the extension registers [${names.join(", ")}]`,
    );
  }
  const constants = await importTypeScript(join(root, "src", "core", "constants.ts"));
  const out = new Map();
  for (const name of names) {
    const spec = ARGUMENT_DECLARATIONS[name];
    const module = await importTypeScript(join(root, spec.module));
    const schema = module[spec.schema];
    if (schema?.type !== "object") throw new Error(`${spec.module}: no ${spec.schema}`);
    const defaults = spec.defaults === undefined ? {} : constants[spec.defaults];
    if (typeof defaults !== "object" || defaults === null)
      throw new Error(`src/core/constants.ts: no ${spec.defaults}`);
    sameFields(
      schema,
      JSON.parse(JSON.stringify(tools.get(name).definition.parameters)),
      `${spec.module} ${spec.schema}`,
    );
    out.set(name, { schema, defaults });
  }
  return out;
}

/**
 * PROVEN_PI_VERSIONS of src/host/proven.ts (the versions the parent and the guard accept without a
 * self-proof), with each version's package and Node from scripts/hosts.mjs (the hosts the suite runs
 * on). Both lists must name the same versions.
 * @returns {Promise<Array<{version: string, packageName: string, minNode: string}>>}
 */
export async function loadProvenPiVersions(root) {
  const file = join(root, "src", "host", "proven.ts");
  const { PROVEN_PI_VERSIONS: versions } = await importTypeScript(file);
  if (!Array.isArray(versions) || versions.some((v) => typeof v !== "string")) {
    throw new Error(`${file}: PROVEN_PI_VERSIONS must be an array of version strings`);
  }
  const { hosts } = await import(pathToFileURL(join(root, "scripts", "hosts.mjs")).href);
  const HOSTS = hosts();
  const hostNames = HOSTS.map((host) => host.name);
  if (JSON.stringify(hostNames) !== JSON.stringify(versions)) {
    throw new Error(
      `${file}: PROVEN_PI_VERSIONS ${versions.join(", ")} differ from the test hosts ${hostNames.join(", ")}`,
    );
  }
  return versions.map((version) => {
    const host = HOSTS.find((h) => h.name === version);
    return { version, packageName: host.packageName, minNode: host.minNode };
  });
}

/**
 * HOST_PROBE_CHECKS of src/core/host-probe-checks.ts: the host probe's checks, in order.
 * @returns {Promise<Array<{id: string, means: string}>>}
 */
export async function loadHostProbeChecks(root) {
  const file = join(root, "src", "core", "host-probe-checks.ts");
  const { HOST_PROBE_CHECKS: checks } = await importTypeScript(file);
  if (typeof checks !== "object" || checks === null) throw new Error(`${file}: HOST_PROBE_CHECKS must be an object`);
  return Object.entries(checks).map(([id, means]) => ({ id, means: String(means) }));
}

const STAGES = ["admission", "launch", "run", "verify", "retrieval", "steer"];

/**
 * FAILURE_REMEDIATION and FAILURE_WHEN of src/core/errors.ts, checked to cover exactly the same codes.
 * @returns {Promise<Array<{code: string, stages: string[], when: string, remediation: string}>>}
 */
export async function loadFailureTable(root) {
  const file = join(root, "src", "core", "errors.ts");
  const { FAILURE_REMEDIATION: remediation, FAILURE_WHEN: when } = await importTypeScript(file);
  if (typeof remediation !== "object" || remediation === null) throw new Error(`${file}: no FAILURE_REMEDIATION`);
  if (typeof when !== "object" || when === null) throw new Error(`${file}: no FAILURE_WHEN`);
  const codes = Object.keys(remediation);
  const missing = codes.filter((code) => !Object.hasOwn(when, code));
  const extra = Object.keys(when).filter((code) => !Object.hasOwn(remediation, code));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `${file}: FAILURE_WHEN must cover exactly the codes of FAILURE_REMEDIATION` +
        (missing.length > 0 ? `; missing: ${missing.join(", ")}` : "") +
        (extra.length > 0 ? `; unknown: ${extra.join(", ")}` : ""),
    );
  }
  return codes.map((code) => {
    const entry = when[code];
    const stages = [...entry.stages];
    const unknown = stages.filter((stage) => !STAGES.includes(stage));
    if (stages.length === 0 || unknown.length > 0) {
      throw new Error(`${file}: FAILURE_WHEN.${code} has bad stages: ${JSON.stringify(entry.stages)}`);
    }
    return { code, stages, when: entry.when, remediation: remediation[code] };
  });
}

/**
 * Who may set each setting (src/core/setting-trust.ts SETTING_POLICIES and SETTING_RULE_TEXT).
 * @returns {Promise<{policies: Array<{key: string, env: string|null, rule: string, because: string}>, rules: object}>}
 */
export async function loadSettingPolicies(root) {
  const module = await importTypeScript(join(root, "src", "core", "setting-trust.ts"));
  return { policies: module.SETTING_POLICIES, rules: module.SETTING_RULE_TEXT };
}
