import { StowageError } from "@stowage/core";
import type { Principal } from "@stowage/storage-s3";
import type { Context, MiddlewareHandler } from "hono";
import type { Services } from "../services.js";

export type AppEnv = { Variables: { principal: Principal; principalId: string } };
export type AppContext = Context<AppEnv>;

/** Resolves the Bearer API key to a principal, or answers 401. */
export function requireKey(services: Services): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = await services.uploads.authenticate(c.req.header("authorization"), {
      signal: c.req.raw.signal,
    });
    c.set("principal", principal);
    c.set("principalId", `${principal.kind}:${principal.id}`);
    await next();
  };
}

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
