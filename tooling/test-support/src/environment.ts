import { runningInCi } from "@stowage/core/testing";

/** True when `CI` is set (and not `false` or `0`): a test that cannot run here must fail, not skip. */
export const inCi = runningInCi();

/** True when the tests run as root, which mounting a tmpfs or switching to another user needs. */
export const isRoot = process.getuid?.() === 0;
