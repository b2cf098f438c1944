/**
 * Any Pi release on the npm registry as a host to test or prove (`npm test -- --host <version>`,
 * `npm run prove-host -- <version>`): installed once into .hosts/<version>/ (ignored by git) from its
 * package — @mariozechner/pi-coding-agent up to 0.73, @earendil-works/pi-coding-agent from 0.74
 * (src/host/proven.ts piPackageOf, the one place that says so). Downloads happen only here, for these
 * explicit developer commands, never in the default `npm test`.
 *
 * Whatever stops a version — not a version, not on the registry, the registry unreachable, npm
 * failing to install it — is a HostUnavailable whose message is one line saying why.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createJiti } from "jiti";
import { HOST_VERSIONS, REPO_ROOT, resolveHost } from "./hosts.mjs";
import { prepareProofCopy } from "./proof-copy.mjs";

export class HostUnavailable extends Error {}

/** "x.y.z": the shape of a Pi release. */
export function isReleaseVersion(version) {
  return typeof version === "string" && /^\d+\.\d+\.\d+$/.test(version);
}

/** The npm package Pi `version` is published as (src/host/proven.ts). */
export async function piPackageOf(version) {
  const proven = await createJiti(import.meta.url).import(join(REPO_ROOT, "src", "host", "proven.ts"));
  return proven.piPackageOf(version);
}

/** The first line of npm's output that says what went wrong. */
function npmSays(run) {
  const lines = `${run.stderr ?? ""}\n${run.stdout ?? ""}`.split("\n").map((l) => l.trim());
  const summary = lines.find((l) => /^npm (error|ERR!) (404 )?\S/.test(l) && !/^npm (error|ERR!) code /.test(l));
  return (summary ?? lines.find((l) => l !== "") ?? `exit ${run.status ?? run.signal}`).slice(0, 200);
}

function installedVersion(packageDir) {
  try {
    return JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

/**
 * Pi `version` installed from the registry: its package dir and name (installed now when it is not
 * in .hosts/<version>/ yet). Throws HostUnavailable.
 * @returns {Promise<{packageDir: string, packageName: string}>}
 */
export async function installRegistryHost(
  version,
  { root = REPO_ROOT, say = (line) => process.stdout.write(`${line}\n`) } = {},
) {
  if (!isReleaseVersion(version)) throw new HostUnavailable(`"${version}" is not a Pi release version (x.y.z)`);
  const packageName = await piPackageOf(version);
  const installDir = join(root, ".hosts", version);
  const packageDir = join(installDir, "node_modules", ...packageName.split("/"));
  if (installedVersion(packageDir) === version) return { packageDir, packageName };

  const view = spawnSync("npm", ["view", `${packageName}@${version}`, "version", "--json"], { encoding: "utf8" });
  if (view.error)
    throw new HostUnavailable(`cannot run npm to look up ${packageName}@${version}: ${view.error.message}`);
  if (view.status !== 0 || view.stdout.trim() === "") {
    if (/E404|No match found/.test(`${view.stderr}${view.stdout}`) || view.stdout.trim() === "") {
      throw new HostUnavailable(`pi ${version} is not on the npm registry (no ${packageName}@${version})`);
    }
    throw new HostUnavailable(`could not ask the npm registry for ${packageName}@${version}: ${npmSays(view)}`);
  }

  say(`installing ${packageName}@${version} from the npm registry into ${installDir} …`);
  rmSync(installDir, { recursive: true, force: true });
  mkdirSync(installDir, { recursive: true });
  writeFileSync(join(installDir, "package.json"), '{"private": true}\n');
  const install = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", installDir, `${packageName}@${version}`],
    { encoding: "utf8" },
  );
  if (
    install.status !== 0 ||
    installedVersion(packageDir) !== version ||
    !existsSync(join(packageDir, "dist", "cli.js"))
  ) {
    const why = install.status !== 0 ? npmSays(install) : "the installed package has no dist/cli.js";
    rmSync(installDir, { recursive: true, force: true });
    throw new HostUnavailable(`npm could not install ${packageName}@${version}: ${why}`);
  }
  return { packageDir, packageName };
}

/**
 * Run `vitestArgs` with vitest on Pi `version` from the registry: installed (installRegistryHost),
 * then in a scratch copy of this repository in which the version is proven (scripts/proof-copy.mjs),
 * on the Node its package asks for; the copy is removed after. `env` is added to the run's
 * environment. Returns vitest's exit status; throws HostUnavailable before anything runs.
 */
export async function runOnRegistryHost(version, vitestArgs, { env = {}, banner } = {}) {
  if (HOST_VERSIONS.includes(version))
    throw new HostUnavailable(`pi ${version} is a tested host: npm test -- --host ${version}`);
  const { packageDir } = await installRegistryHost(version);
  let copy;
  try {
    copy = prepareProofCopy(version, packageDir);
  } catch (error) {
    throw new HostUnavailable(error instanceof Error ? error.message.split("\n")[0] : String(error));
  }
  try {
    // hosts.mjs reads the host being proven from the environment on every call.
    Object.assign(process.env, copy.env);
    let host;
    try {
      host = resolveHost(version);
    } catch (error) {
      throw new HostUnavailable(error instanceof Error ? error.message : String(error));
    }
    process.stdout.write(
      `\n=== ${banner ?? `pi ${version}`} (${host.packageName}) on Node ${host.nodeVersion} (scratch copy ${copy.dir}) ===\n\n`,
    );
    const run = spawnSync(
      host.nodePath,
      [join(copy.dir, "node_modules", "vitest", "vitest.mjs"), "run", ...vitestArgs],
      {
        cwd: copy.dir,
        stdio: "inherit",
        env: { ...process.env, ...env, PATH: host.pathEnv() },
      },
    );
    return run.status ?? 1;
  } finally {
    copy.remove();
  }
}
