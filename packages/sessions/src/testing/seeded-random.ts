// Values shaped like Claude Code's, drawn from a seeded generator (`seededRandom` of
// `@stowage/core/testing`), so that generated sessions are the same on every run.

/** A UUID v4 drawn from `random`, so generated sessions are reproducible. */
export function seededUuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = "4";
  hex[16] = ((Math.floor(random() * 4) & 0x3) | 0x8).toString(16);
  const s = hex.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** `bytes` pseudo-random bytes, base64-encoded: incompressible, like signatures and screenshots. */
export function seededBase64(random: () => number, bytes: number): string {
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4) {
    const value = (random() * 0xffffffff) >>> 0;
    data[i] = value & 0xff;
    if (i + 1 < bytes) data[i + 1] = (value >>> 8) & 0xff;
    if (i + 2 < bytes) data[i + 2] = (value >>> 16) & 0xff;
    if (i + 3 < bytes) data[i + 3] = value >>> 24;
  }
  return Buffer.from(data).toString("base64");
}
