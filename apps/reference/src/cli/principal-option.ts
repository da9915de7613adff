import { assertPrincipal, type Principal } from "@stowage/core";
import type { Command } from "commander";
import { markUsageError, usageError } from "./usage-error.js";

/** What `--user`/`--org` parse to. */
export interface PrincipalOptions {
  user?: string;
  org?: string;
}

/** `--user <id>` / `--org <id>`: whose namespace a command works in. */
export function addPrincipalOptions(command: Command): Command {
  return command
    .option("--user <id>", "act in this user's namespace")
    .option("--org <id>", "act in this org's namespace");
}

/** The principal of `--user`/`--org`; undefined with neither, a usage error with both or a bad id. */
export function principalFrom(options: PrincipalOptions): Principal | undefined {
  const { user, org } = options;
  if (user !== undefined && org !== undefined) {
    throw usageError("give one of --user <id> or --org <id>, not both");
  }
  const principal: Principal | undefined =
    user !== undefined
      ? { kind: "user", id: user }
      : org !== undefined
        ? { kind: "org", id: org }
        : undefined;
  // The id names directories and keys: `--user ../x` must not reach outside its namespace.
  try {
    if (principal) assertPrincipal(principal, user !== undefined ? "--user" : "--org");
  } catch (err) {
    throw markUsageError(err as object);
  }
  return principal;
}

/** The principal of `--user`/`--org`, which the command needs: a usage error without. */
export function requiredPrincipal(options: PrincipalOptions): Principal {
  const principal = principalFrom(options);
  if (!principal) throw usageError("give --user <id> or --org <id>: whose data is this?");
  return principal;
}
