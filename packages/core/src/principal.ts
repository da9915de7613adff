import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import { assertSafeId } from "./safe-id.js";

/** Who acts, and who a session belongs to: exactly one user or one org. */
export interface Principal {
  kind: "user" | "org";
  /** A safe id (core's `assertSafeId`): it becomes a key segment. */
  id: string;
}

/** Throws INVALID_INPUT unless `value` is `{ kind: "user" | "org", id }` with a safe id. */
export function assertPrincipal(value: unknown, what = "principal"): asserts value is Principal {
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (typeof value !== "object" || value === null || (kind !== "user" && kind !== "org")) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be { kind: "user" | "org", id }, got ${describeValue(value)}`,
    );
  }
  assertSafeId((value as { id?: unknown }).id, `${what}.id`);
}
