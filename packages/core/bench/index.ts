// What the contract's edge costs: key validation against the usual hand-rolled check, and the
// memory store (validation, copies, async) against a bare Map doing the same copies.
import { posix } from "node:path";
import { runBenchmarks } from "@stowage/bench-kit";
import { assertSafeKey, createMemoryObjectStore } from "@stowage/core";

const KEY_COUNT = 100_000;
const keys = Array.from(
  { length: KEY_COUNT },
  (_, i) =>
    `sessions/user-${i % 97}/2026-11-21T09-${i}_4f9c2d1e-8a7b-4c3d-9e0f-${i.toString(16).padStart(12, "0")}/${i}.bash.log`,
);

/** The check most code writes by hand: normalize and compare, reject absolute and parent paths. */
function handRolledCheck(key: string): void {
  const normalized = posix.normalize(key);
  if (normalized !== key || posix.isAbsolute(key) || key.startsWith("..") || key.includes("\0")) {
    throw new Error(`bad key ${key}`);
  }
}

const OBJECT_COUNT = 10_000;
const body = new Uint8Array(4096).fill(7);
const objectKeys = keys.slice(0, OBJECT_COUNT);

await runBenchmarks("@stowage/core", [
  {
    name: `assertSafeKey on ${KEY_COUNT.toLocaleString("en-US")} session-artifact keys vs a hand-rolled posix.normalize check`,
    target: { kind: "speed", min: 1.0 },
    units: { count: KEY_COUNT, label: "ops" },
    async ours() {
      for (const key of keys) assertSafeKey(key);
    },
    async baseline() {
      for (const key of keys) handRolledCheck(key);
    },
  },
  {
    name: `memory store: ${OBJECT_COUNT.toLocaleString("en-US")} puts + gets of 4 KiB vs a Map with the same copies`,
    target: { kind: "speed", min: 0.3 },
    units: { count: OBJECT_COUNT * 2, label: "ops" },
    async ours() {
      const store = createMemoryObjectStore();
      for (const key of objectKeys) await store.put(key, body);
      for (const key of objectKeys) await store.get(key);
    },
    async baseline() {
      const map = new Map<string, Uint8Array>();
      for (const key of objectKeys) map.set(key, body.slice());
      for (const key of objectKeys) await Promise.resolve(map.get(key)!.slice());
    },
  },
]);
