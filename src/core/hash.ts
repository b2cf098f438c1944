import { createHash, createHmac, type Hash } from "node:crypto";

/** Lowercase hex SHA-256: the only digest format this package writes or accepts. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Incremental form of {@link sha256Hex}, for data that arrives in pieces. */
export function sha256Stream(): { update(data: string | Uint8Array): void; hex(): string } {
  const hash: Hash = createHash("sha256");
  return {
    update: (data) => {
      hash.update(data);
    },
    hex: () => hash.digest("hex"),
  };
}

/** Lowercase hex HMAC-SHA-256 of `data` under `key` (a record only its key's holder could have written). */
export function hmacSha256Hex(key: Uint8Array, data: string | Uint8Array): string {
  return createHmac("sha256", key).update(data).digest("hex");
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
