/**
 * The Pi versions the host-proof suite (test/integration/host-proof.test.ts) passed on. This is the one
 * place the range is written; the parent refuses to launch and the child guard refuses to run outside it.
 */
export const PROVEN_PI_VERSIONS = { min: "0.73.1", max: "0.73.1" } as const;

function parse(version: string): [number, number, number] | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

function compare(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function isProvenPiVersion(version: string): boolean {
  const v = parse(version);
  const min = parse(PROVEN_PI_VERSIONS.min);
  const max = parse(PROVEN_PI_VERSIONS.max);
  if (!v || !min || !max) return false;
  return compare(v, min) >= 0 && compare(v, max) <= 0;
}

export function provenRangeText(): string {
  const { min, max } = PROVEN_PI_VERSIONS;
  return min === max ? min : `${min} to ${max}`;
}
