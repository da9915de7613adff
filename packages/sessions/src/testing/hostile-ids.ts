import { HOSTILE_KEYS, type HostileInput } from "@stowage/core/testing";

/** Ids (request, session, agent type) every session API must reject with INVALID_INPUT. */
export const HOSTILE_IDS: readonly HostileInput[] = [
  ...HOSTILE_KEYS,
  { value: "%2e%2e", why: "URL-encoded traversal" },
  { value: "%2e%2e%2fetc", why: "URL-encoded traversal with slash" },
  { value: "../0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10", why: "traversal before a UUID" },
  { value: "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10/../x", why: "traversal after a UUID" },
  { value: "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10\u0000", why: "UUID with NUL" },
  { value: " 0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10", why: "UUID with a leading space" },
  { value: "x".repeat(10_000), why: "oversized" },
  { value: "-rf", why: "leading dash" },
  { value: "a b", why: "space" },
  { value: "a;DROP TABLE agent_sessions", why: "SQL in an id" },
];
