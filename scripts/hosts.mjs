/**
 * The Pi hosts this package is tested on, and where each one's CLI, SDK and Node binary are. One
 * list (HOST_VERSIONS) for the test runner, the test helpers, the docs generator, the demo and the
 * bench; everything else about a host is derived from its version:
 *
 * - 0.x (0.73.1): `@mariozechner/pi-coding-agent` on the Node that runs npm (Node ≥ 20.6).
 * - 1.x: `@earendil-works/pi-coding-agent` on Node 22 from the npm registry (the devDependency
 *   test/hosts/node22 installs the per-platform `node-<os>-<cpu>` package that ships the binary).
 *   The newest is the devDependency under its own name; every older one is the npm alias
 *   `pi-host-<version>` (`"pi-host-1.5.2": "npm:@earendil-works/pi-coding-agent@1.5.2"`), so
 *   `npm ci` installs them all side by side.
 *
 * Inside `npm run …`, `node` on PATH is node_modules/.bin/node (Node 22, linked from that package),
 * so the Node that ran npm is taken from `npm_node_execpath`, never from PATH.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The environment variable that selects the host of a test run, demo or bench. */
export const HOST_ENV = "PI_BG_DELEGATE_TEST_HOST";

/**
 * A host being proven or tested from the registry (scripts/prove-host.mjs, `npm test -- --host
 * <version>`): "<version>=<package dir>" of a Pi installed outside node_modules (.hosts/). Never set
 * in normal runs. Read on every call (never cached at import), so a script may set it after
 * importing this module.
 */
export const EXTRA_HOST_ENV = "PI_BG_DELEGATE_EXTRA_HOST";

/** The Pi versions the suite runs on, oldest first: the one list of test hosts. */
export const HOST_VERSIONS = Object.freeze(["0.73.1", "1.3.0", "1.4.0", "1.5.0", "1.5.2", "1.6.0"]);

/**
 * What each host runs in `npm test` (vitest.config.ts): the first host runs every test; the newest
 * 1.x and a host being proven run every real-pi test; every other 1.x runs SUBSET_TESTS.
 */
export const SUBSET_TESTS = Object.freeze([
  "test/integration/host-proof.test.ts",
  "test/integration/host-probe*.test.ts",
  "test/integration/launch-boundary.test.ts",
  "test/integration/guard-*.test.ts",
  "test/integration/delegate-loop.test.ts",
  "test/integration/retrieval.test.ts",
  "test/integration/lifecycle.test.ts",
  "test/integration/seed-hosts.test.ts",
  "test/integration/seed-branch.test.ts",
  "test/integration/admission.test.ts",
]);
const ALL_TESTS = Object.freeze(["test/**/*.test.ts"]);
const REAL_PI_TESTS = Object.freeze(["test/integration/**/*.test.ts", "test/helpers/**/*.test.ts"]);

/** -1, 0 or 1 as version `a` is older than, the same as or newer than `b` ("1.10.0" > "1.9.2"). */
export function compareVersions(a, b) {
  const x = a.replace(/^v/, "").split(".").map(Number);
  const y = b.replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0) ? 1 : -1;
  }
  return 0;
}

const NEWEST = HOST_VERSIONS.at(-1);

/**
 * A host installed outside node_modules: its package and oldest Node from its own package.json; it
 * runs on the Node that runs npm when that Node is new enough for it, else on Node 22.
 */
function extraHostSpec(name, packageDir) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  } catch {
    throw new Error(`${EXTRA_HOST_ENV}: no Pi package at ${packageDir}`);
  }
  const minNode = /(\d+\.\d+\.\d+)/.exec(manifest.engines?.node ?? "")?.[1] ?? "20.6.0";
  const packageName = typeof manifest.name === "string" ? manifest.name : "@earendil-works/pi-coding-agent";
  const node = compareVersions(minNode, "22.0.0") >= 0 ? "registry" : "npm";
  return { name, packageName, minNode, node, packageDir, tests: "real-pi" };
}

/** A host's spec, derived from its version (and, for a host being proven, its package dir). */
function hostSpec(name, packageDir) {
  if (packageDir !== undefined) return extraHostSpec(name, packageDir);
  if (name.startsWith("0.")) {
    const packageName = "@mariozechner/pi-coding-agent";
    return { name, packageName, minNode: "20.6.0", node: "npm", packageDir: installed(packageName), tests: "all" };
  }
  const packageName = "@earendil-works/pi-coding-agent";
  return {
    name,
    packageName,
    minNode: "22.19.0",
    node: "registry",
    packageDir: installed(name === NEWEST ? packageName : `pi-host-${name}`),
    tests: name === NEWEST ? "real-pi" : "subset",
  };
}

function installed(dependency) {
  return join(REPO_ROOT, "node_modules", ...dependency.split("/"));
}

/** The devDependency (name and spec) of package.json that installs a test host. */
export function hostDependency(name) {
  if (name.startsWith("0.")) return ["@mariozechner/pi-coding-agent", name];
  if (name === NEWEST) return ["@earendil-works/pi-coding-agent", name];
  return [`pi-host-${name}`, `npm:@earendil-works/pi-coding-agent@${name}`];
}

function extraHost() {
  const value = process.env[EXTRA_HOST_ENV];
  if (!value) return undefined;
  const [name, packageDir] = value.split("=");
  if (!name || !packageDir) throw new Error(`${EXTRA_HOST_ENV} must be <version>=<package dir>`);
  return hostSpec(name, packageDir);
}

/**
 * Every host, oldest first: HOST_VERSIONS, and the host being proven when $PI_BG_DELEGATE_EXTRA_HOST
 * names one (in its place by version). Built on every call.
 * @returns {Array<{name: string, packageName: string, minNode: string, node: "npm" | "registry",
 *   packageDir: string, tests: "all" | "real-pi" | "subset"}>}
 */
export function hosts() {
  const list = HOST_VERSIONS.map((name) => hostSpec(name));
  const extra = extraHost();
  if (extra && !HOST_VERSIONS.includes(extra.name)) list.push(extra);
  return list.sort((a, b) => compareVersions(a.name, b.name));
}

export function hostNames() {
  return hosts().map((host) => host.name);
}

/** The vitest `include` globs of a host's run (see SUBSET_TESTS). */
export function testInclude(name) {
  const host = hosts().find((h) => h.name === name);
  if (!host) throw new Error(`unknown pi host "${name}" (known: ${hostNames().join(", ")})`);
  return [...{ all: ALL_TESTS, "real-pi": REAL_PI_TESTS, subset: SUBSET_TESTS }[host.tests]];
}

function versionAtLeast(version, min) {
  return compareVersions(version, min) >= 0;
}

function nodeVersionOf(path) {
  if (path === process.execPath) return process.version;
  const run = spawnSync(path, ["--version"], { encoding: "utf8" });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/** The Node binary a host runs on, or an Error saying why there is none. */
function nodeFor(host) {
  if (host.node === "npm") {
    const npmNode = process.env.npm_node_execpath || process.execPath;
    const version = nodeVersionOf(npmNode);
    if (version === undefined || versionAtLeast(version, host.minNode)) return npmNode;
    return new Error(`pi ${host.name} needs Node ≥ ${host.minNode}; the Node that runs npm is ${version}`);
  }
  const packaged = join(REPO_ROOT, "node_modules", `node-${process.platform}-${process.arch}`, "bin", "node");
  if (existsSync(packaged)) return packaged;
  if (versionAtLeast(process.version, host.minNode)) return process.execPath;
  return new Error(
    `pi ${host.name} needs Node ≥ ${host.minNode}; node-${process.platform}-${process.arch} is not installed ` +
      "(npm ci installs it on linux and macOS, x64 and arm64) and this Node is " +
      process.version,
  );
}

/**
 * A host by name (default: $PI_BG_DELEGATE_TEST_HOST, else the first). Throws on an unknown name.
 * @returns {{name: string, packageName: string, minNode: string, version: string, packageDir: string,
 *   cliPath: string, sdkUrl: string, nodePath: string, pathEnv: (path?: string) => string}}
 */
export function resolveHost(name = process.env[HOST_ENV] || HOST_VERSIONS[0]) {
  const all = hosts();
  const host = all.find((h) => h.name === name);
  if (!host) throw new Error(`unknown pi host "${name}" (known: ${all.map((h) => h.name).join(", ")})`);
  const { packageDir } = host;
  const manifest = join(packageDir, "package.json");
  if (!existsSync(manifest)) throw new Error(`${host.packageName} is not installed at ${packageDir}; run npm ci`);
  const version = JSON.parse(readFileSync(manifest, "utf8")).version;
  if (version !== host.name) throw new Error(`${host.packageName} is ${version}, expected ${host.name}; run npm ci`);
  const node = nodeFor(host);
  if (node instanceof Error) throw node;
  return {
    ...host,
    version,
    packageDir,
    cliPath: join(packageDir, "dist", "cli.js"),
    sdkUrl: pathToFileURL(join(packageDir, "dist", "index.js")).href,
    nodePath: node,
    nodeVersion: nodeVersionOf(node),
    /** PATH with this host's Node first and node_modules/.bin (Node 22's `node` link) taken out. */
    pathEnv(path = process.env.PATH ?? "") {
      const kept = path.split(delimiter).filter((dir) => dir !== "" && !dir.endsWith(join("node_modules", ".bin")));
      return [dirname(node), ...kept].join(delimiter);
    },
  };
}

/**
 * Pi CLI arguments that load this package and nothing else of the machine's: no installed packages
 * or extensions (an installed copy of pi-bg-delegate would register the tools twice), skills,
 * prompt templates, themes or context files; no session file.
 */
export function packageOnlyPiArgs(packageDir = REPO_ROOT) {
  return [
    "-e",
    packageDir,
    "--no-extensions",
    "--no-session",
    "--no-skills",
    "--no-prompt-templates",
    "--no-themes",
    "--no-context-files",
  ];
}

/**
 * A model registry, and what createAgentSession needs beside it, built the way `host` builds one
 * from its own SDK module `sdk`: 1.x over a ModelRuntime (AuthStorage is gone, the runtime goes to
 * the session), 0.73.1 (and the 0.74–0.99 releases, which have no ModelRuntime yet) over
 * AuthStorage. Decided by what the SDK exports, not by its package. For SDK parents of the tests and
 * the bench alike.
 */
export async function createHostRegistry(sdk, _host, agentDir, modelsPath) {
  const authPath = `${agentDir}/auth.json`;
  if (sdk.ModelRuntime !== undefined) {
    const modelRuntime = await sdk.ModelRuntime.create({ authPath, modelsPath });
    return { modelRegistry: new sdk.ModelRegistry(modelRuntime), sessionOptions: { modelRuntime } };
  }
  const authStorage = sdk.AuthStorage.create(authPath);
  const modelRegistry = sdk.ModelRegistry.create(authStorage, modelsPath);
  return { modelRegistry, sessionOptions: { authStorage, modelRegistry } };
}
