/**
 * The Pi hosts this package is tested on, and where each one's CLI, SDK and Node binary are. One
 * list for the test runner, the test helpers, the demo and the bench.
 *
 * - 0.73.1: `@mariozechner/pi-coding-agent` on the Node that runs npm (Node ≥ 20.6).
 * - 1.6.0: `@earendil-works/pi-coding-agent` on Node 22 from the npm registry (the devDependency
 *   test/hosts/node22 installs the per-platform `node-<os>-<cpu>` package that ships the binary).
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
 * A host being proven (scripts/prove-host.mjs): "<version>=<package dir>" of an
 * @earendil-works/pi-coding-agent installed outside node_modules. Never set in normal runs.
 */
export const EXTRA_HOST_ENV = "PI_BG_DELEGATE_EXTRA_HOST";

function extraHosts() {
  const value = process.env[EXTRA_HOST_ENV];
  if (!value) return [];
  const [name, packageDir] = value.split("=");
  if (!name || !packageDir) throw new Error(`${EXTRA_HOST_ENV} must be <version>=<package dir>`);
  return [{ name, packageName: "@earendil-works/pi-coding-agent", minNode: "22.19.0", node: "registry", packageDir }];
}

/** Every host, oldest first. `minNode` is the host package's own engines.node. */
export const HOSTS = [
  { name: "0.73.1", packageName: "@mariozechner/pi-coding-agent", minNode: "20.6.0", node: "npm" },
  { name: "1.6.0", packageName: "@earendil-works/pi-coding-agent", minNode: "22.19.0", node: "registry" },
  ...extraHosts(),
];

export function hostNames() {
  return HOSTS.map((host) => host.name);
}

function versionAtLeast(version, min) {
  const a = version.replace(/^v/, "").split(".").map(Number);
  const b = min.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

function nodeVersionOf(path) {
  if (path === process.execPath) return process.version;
  const run = spawnSync(path, ["--version"], { encoding: "utf8" });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/** The Node binary a host runs on, or an Error saying why there is none. */
function nodeFor(host) {
  if (host.node === "npm") return process.env.npm_node_execpath || process.execPath;
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
export function resolveHost(name = process.env[HOST_ENV] || HOSTS[0].name) {
  const host = HOSTS.find((h) => h.name === name);
  if (!host) throw new Error(`unknown pi host "${name}" (known: ${hostNames().join(", ")})`);
  const packageDir = host.packageDir ?? join(REPO_ROOT, "node_modules", ...host.packageName.split("/"));
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
 * from its own SDK module `sdk`: 1.6 over a ModelRuntime (AuthStorage is gone, the runtime goes to
 * the session), 0.73.1 over AuthStorage. For SDK parents of the tests and the bench alike.
 */
export async function createHostRegistry(sdk, host, agentDir, modelsPath) {
  const authPath = `${agentDir}/auth.json`;
  if (host.packageName.startsWith("@earendil-works/")) {
    const modelRuntime = await sdk.ModelRuntime.create({ authPath, modelsPath });
    return { modelRegistry: new sdk.ModelRegistry(modelRuntime), sessionOptions: { modelRuntime } };
  }
  const authStorage = sdk.AuthStorage.create(authPath);
  const modelRegistry = sdk.ModelRegistry.create(authStorage, modelsPath);
  return { modelRegistry, sessionOptions: { authStorage, modelRegistry } };
}
