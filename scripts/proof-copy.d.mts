export const PROOF_COPY_ENTRIES: readonly string[];
export function isProvableVersion(version: unknown): version is string;
export function prepareProofCopy(
  version: string,
  packageDir: string,
  options?: { root?: string },
): { dir: string; env: Record<string, string>; remove: () => void };
export function contextRulesOf(version: string): "pi-0.73" | "pi-1.x";
