import { describeValue, StowageError } from "@stowage/core";

/** Who an API key belongs to, and who a session belongs to: exactly one user or one org. */
export interface Principal {
  kind: "user" | "org";
  id: string;
}

/** Longest user, org or session id accepted. */
export const MAX_ID_LENGTH = 128;
/** Ids become key segments: letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** The folder beside `session.json` and `diff.txt` that holds a session's artifacts. */
export const ARTIFACTS_FOLDER = "artifacts";

export function idProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return "must be a string";
  if (value.length === 0 || value.length > MAX_ID_LENGTH) return `must be 1 to ${MAX_ID_LENGTH} characters`;
  if (!ID_PATTERN.test(value)) {
    return `must be letters, digits, ".", "_" or "-", starting with a letter or digit`;
  }
  return undefined;
}

/** Throws INVALID_INPUT unless `value` is a safe user, org or session id. */
export function assertArtifactId(value: unknown, what: string): asserts value is string {
  const problem = idProblem(value);
  if (problem) throw new StowageError("INVALID_INPUT", `${what} ${problem}, got ${describeValue(value)}`);
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
  assertArtifactId((value as { id?: unknown }).id, `${what}.id`);
}

export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.kind === b.kind && a.id === b.id;
}

/** `sessions/user/<userId>/<sessionId>/` or `sessions/org/<orgId>/<sessionId>/`. */
export function sessionPrefix(owner: Principal, sessionId: string): string {
  assertPrincipal(owner, "session owner");
  assertArtifactId(sessionId, "sessionId");
  return `sessions/${owner.kind}/${owner.id}/${sessionId}/`;
}

/** `<session prefix>artifacts/`: only artifacts live here, never `session.json` or `diff.txt`. */
export function artifactsPrefix(owner: Principal, sessionId: string): string {
  return `${sessionPrefix(owner, sessionId)}${ARTIFACTS_FOLDER}/`;
}

/** The key of one artifact; `filename` must already be a validated artifact filename. */
export function artifactKey(owner: Principal, sessionId: string, filename: string): string {
  return `${artifactsPrefix(owner, sessionId)}${filename}`;
}
