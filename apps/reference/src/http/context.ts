import { type JsonBudget, type Principal, readJsonWithinBudget, StowageError } from "@stowage/core";
import type { Tenant } from "@stowage/tenancy";
import type { Context } from "hono";
import { SMALL_JSON_BODY } from "./limits.js";

export type AppEnv = {
  Variables: {
    principal: Principal;
    principalId: string;
    /** The public id of the API key the request came with (what its rate limit counts). */
    keyId: string;
    /** The caller's namespace: every route reads and writes through it only. */
    tenant: Tenant;
  };
};
export type AppContext = Context<AppEnv>;

/**
 * The request's JSON body, read within the route's `budget` (see `limits.ts`; default
 * {@link SMALL_JSON_BODY}) and parsed only once it is within it: TOO_LARGE (`JSON_TOO_LARGE`,
 * a declared length over it is refused unread), INVALID_INPUT (`JSON_TOO_DEEP`,
 * `JSON_TOO_MANY_VALUES`, `INVALID_JSON`, or no JSON content type).
 */
export async function jsonBody(c: AppContext, budget: JsonBudget = SMALL_JSON_BODY): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/json")) {
    throw new StowageError(
      "INVALID_INPUT",
      `expected a JSON body (content-type application/json), got ${JSON.stringify(type)}`,
    );
  }
  const declared = c.req.header("content-length");
  return readJsonWithinBudget(c.req.raw.body, budget, {
    what: "the request body",
    ...(declared !== undefined && /^\d+$/.test(declared) ? { declaredBytes: Number(declared) } : {}),
    signal: c.req.raw.signal,
  });
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
