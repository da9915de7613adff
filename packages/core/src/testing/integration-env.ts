export type IntegrationEnv =
  | { ready: true; values: Record<string, string> }
  | { ready: false; reason: string; values: Record<string, string> };

/** True when `CI` is set (and not `0` or `false`): a test that cannot run must then fail, not skip. */
export function runningInCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false";
}

/**
 * Gate for integration tests that need a real server. Outside CI, missing variables skip the
 * suite with a printed reason; with `CI` set, they are a failure, never a silent skip.
 */
export function integrationEnv(what: string, names: readonly string[]): IntegrationEnv {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    const value = process.env[name];
    if (value) values[name] = value;
    else missing.push(name);
  }
  if (missing.length === 0) return { ready: true, values };
  const list = missing.join(", ");
  if (runningInCi()) {
    throw new Error(
      `${what}: ${list} must be set when CI is set; a missing server fails CI instead of skipping`,
    );
  }
  const reason = `${what} skipped: ${list} not set (start the server and export ${list} to run it)`;
  console.warn(`[stowage] ${reason}`);
  return { ready: false, reason, values };
}
