import { Hono } from "hono";
import type { Services } from "../../services.js";
import type { AppEnv } from "../context.js";

/**
 * The caller's trash (`@stowage/tenancy`'s): what it deleted that is kept for its grace period,
 * every store of it unreachable until it is restored or purged.
 * `GET /trash`: `{ items: [{ kind, id, trashedAt, purgeAfter, by, bytes }], bytes }`, soonest purged
 * first; `bytes` is what the trash still holds of the caller's storage.
 * `POST /trash/:kind/:id/restore`: puts it back exactly as it was (CONFLICT `TRASH_PURGING` when its
 * purge was decided first). `DELETE /trash/:kind/:id`: purges it now, its deletion audit rows by the
 * caller's key (CONFLICT `TRASH_RESTORING`). Another principal's, or none, is 404 (`NOT_IN_TRASH`).
 */
export function trashRoutes(services: Pick<Services, "stowage">) {
  const app = new Hono<AppEnv>();
  app.get("/trash", async (c) =>
    c.json(await services.stowage.listTrash(c.get("principal"), { signal: c.req.raw.signal })),
  );
  app.post("/trash/:kind/:id/restore", async (c) =>
    c.json(
      await services.stowage.restoreFromTrash(c.get("principal"), c.req.param("kind"), c.req.param("id"), {
        signal: c.req.raw.signal,
      }),
    ),
  );
  app.delete("/trash/:kind/:id", async (c) => {
    const { sessionId, deleted } = await services.stowage.purgeFromTrash(
      c.get("principal"),
      c.req.param("kind"),
      c.req.param("id"),
      { signal: c.req.raw.signal, by: `key:${c.get("keyId")}` },
    );
    return c.json({ sessionId, ...deleted });
  });
  return app;
}
