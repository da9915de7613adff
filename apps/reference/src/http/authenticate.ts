import { getConnInfo } from "@hono/node-server/conninfo";
import { parseBearerToken, StowageError } from "@stowage/core";
import type { MiddlewareHandler } from "hono";
import type { Services } from "../services.js";
import { clientAddress } from "./client-address.js";
import type { AppEnv } from "./context.js";
import { createRecentKeys } from "./recent-keys.js";

/**
 * Paths anyone may reach, counted against no limit: the health check (a load balancer's), the
 * viewer's static files, and signed URLs (the signature is the authorization, and it bounds what
 * a request may do). None of them shares the bucket failed keys fill, so a flood of made-up keys
 * cannot take them down for everyone behind one address.
 */
const PUBLIC_PATHS = [/^\/healthz$/, /^\/$/, /^\/viewer\//, /^\/direct\//];

/**
 * The one place requests are authenticated and their tenant chosen. Every other route runs with
 * `c.var.tenant`: the namespace of the caller's principal, the only one it can address. Requests
 * without a valid key count against their address, so guessing keys is rate limited too; an
 * address over its limit is refused before its key is looked at, so the refusal costs no read of
 * a key record, unless the request carries a key that verified recently here (see
 * {@link RecentKeys}): bad keys from an address never lock out the good ones behind it.
 */
export function authenticate(
  services: Pick<Services, "apiKeys" | "limits" | "tenant" | "config">,
): MiddlewareHandler<AppEnv> {
  const { trustedProxies } = services.config;
  const recentKeys = createRecentKeys();
  return async (c, next) => {
    if (PUBLIC_PATHS.some((pattern) => pattern.test(c.req.path))) return next();
    const address = clientAddress(
      getConnInfo(c).remote.address,
      c.req.header("x-forwarded-for"),
      trustedProxies,
    );
    const apiKey = bearerOf(c.req.header("authorization"));
    await services.limits.checkAddress(address).catch((err: unknown) => {
      if (!(apiKey !== undefined && recentKeys.has(apiKey))) throw err;
    });
    let verified: Awaited<ReturnType<typeof services.apiKeys.verify>> = null;
    if (apiKey !== undefined) {
      verified = await services.apiKeys.verify(apiKey, { signal: c.req.raw.signal });
      if (verified) recentKeys.remember(apiKey);
    }
    if (!verified) {
      await services.limits.consumeAddress(address);
      throw new StowageError(
        "UNAUTHORIZED",
        "a valid API key is required: send `Authorization: Bearer <API key>`",
      );
    }
    await services.limits.consumeKey(verified.keyId);
    c.set("principal", verified.principal);
    c.set("keyId", verified.keyId);
    c.set("principalId", `${verified.principal.kind}:${verified.principal.id}`);
    c.set("tenant", services.tenant(verified.principal));
    await next();
  };
}

/** The key of an `Authorization: Bearer <key>` header; undefined when there is none or it is malformed. */
function bearerOf(authorization: string | undefined): string | undefined {
  try {
    return parseBearerToken(authorization);
  } catch (err) {
    if (StowageError.is(err, "UNAUTHORIZED")) return undefined;
    throw err;
  }
}
