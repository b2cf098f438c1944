/**
 * Figure 8: the host probe a Pi outside the proven set runs before its first delegate (docs/
 * configuration.md, "Self-proof"), on the bench's host: wall time of the whole probe (three real
 * children against the scripted model, the temp dir made and removed), goal at most 10 s on a
 * 2-core machine. Side by side, one bare `pi --version` per repetition, so a slow machine shows as
 * such. A probe that fails a check is reported, never timed as a pass.
 */
import { spawnSync } from "node:child_process";
import { createJiti } from "jiti";
import { resolveHost } from "../../hosts.mjs";
import { figure, msSummary } from "../stats.mjs";

const jiti = createJiti(import.meta.url);

export async function selfProofFigure({ reps, log }) {
  const host = resolveHost();
  const { runHostProbe } = await jiti.import("../../../src/host/index.ts");
  const { isolatedHostFlags } = await jiti.import("../../../src/host/index.ts");
  const { readHostCapabilities } = await jiti.import("../../../src/host/index.ts");
  const sdk = await import(host.sdkUrl);
  const capabilities = await readHostCapabilities(host.cliPath, process.execPath);
  const seconds = [];
  const versionMs = [];
  const failed = [];
  log(`figure 8: ${reps} × the host probe on pi ${host.name}`);
  for (let rep = 0; rep < reps; rep++) {
    const started = Date.now();
    spawnSync(process.execPath, [host.cliPath, "--version"], { env: { ...process.env, PI_OFFLINE: "1" } });
    versionMs.push(Date.now() - started);
    const report = await runHostProbe({
      nodePath: process.execPath,
      piCli: host.cliPath,
      sessionVersion: sdk.CURRENT_SESSION_VERSION,
      hostFlags: isolatedHostFlags(capabilities),
    });
    if (report.ok) seconds.push(report.durationMs / 1000);
    else failed.push(...report.checks.filter((c) => !c.ok).map((c) => `${c.id}: ${c.seen}`));
  }
  return figure({
    id: "self-proof",
    title: `host probe (first delegate on an unproven Pi), pi ${host.name}`,
    unit: "s",
    samples: seconds,
    target: 10,
    digits: 2,
    params: { host: host.name, children: 3 },
    detail: { pi_version_ms: msSummary(versionMs), probes_failed: reps - seconds.length },
    notes:
      failed.length === 0 ? [`all ${reps} probes passed every check`] : [`probe checks failed: ${failed.join("; ")}`],
  });
}
