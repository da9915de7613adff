import { StowageError } from "@stowage/core";
import type { Principal } from "@stowage/uploads";
import type { Context } from "hono";
import type { ServerTenant } from "../tenancy/tenants.js";

export type AppEnv = {
  Variables: {
    principal: Principal;
    principalId: string;
    /** The public id of the API key the request came with (what its rate limit counts). */
    keyId: string;
    /** The caller's namespace: every route reads and writes through it only. */
    tenant: ServerTenant;
  };
};
export type AppContext = Context<AppEnv>;

/** The request's JSON body; INVALID_INPUT when it is not JSON. Size is limited by bodyLimit. */
export async function jsonBody(c: AppContext): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/json")) {
    throw new StowageError(
      "INVALID_INPUT",
      `expected a JSON body (content-type application/json), got ${JSON.stringify(type)}`,
    );
  }
  try {
    return await c.req.json();
  } catch (err) {
    throw new StowageError("INVALID_INPUT", "request body is not valid JSON", { cause: err });
  }
}

/** A non-negative integer query parameter, or undefined. */
export function integerQuery(c: AppContext, name: string): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be a non-negative integer, got ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw);
}
