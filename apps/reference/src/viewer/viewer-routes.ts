import { readdir, readFile } from "node:fs/promises";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

const assetsDir = fileURLToPath(new URL("./assets/", import.meta.url));

/**
 * The web viewer: static files from `viewer/assets/`, served by the app (no CDN). Only files that
 * exist there when the app starts are served; the page talks to the API with the user's key.
 */
export function viewerRoutes() {
  const app = new Hono();
  const files = readdir(assetsDir).then((names) => new Set(names.filter((name) => TYPES[extname(name)])));
  const serve = async (name: string) => {
    if (!(await files).has(name)) return undefined;
    return new Response(await readFile(`${assetsDir}${name}`), {
      headers: {
        "content-type": TYPES[extname(name)]!,
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        // Everything the page loads comes from this origin; blob images are object URLs.
        "content-security-policy":
          "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self'",
      },
    });
  };
  app.get("/", async (c) => (await serve("index.html")) ?? c.notFound());
  app.get("/viewer/:file", async (c) => (await serve(c.req.param("file"))) ?? c.notFound());
  return app;
}
