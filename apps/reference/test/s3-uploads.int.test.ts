import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { s3TestEnv } from "@stowage/test-support";
import { uploadFile } from "@stowage/uploads/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoScreenshot } from "../src/demo/screenshot.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

const s3 = s3TestEnv("reference app upload flow");

describe.skipIf(!s3.ready)("uploads with S3 presigned URLs", () => {
  let app: TestApp;
  let dir: string;
  beforeAll(async () => {
    app = await startTestApp(s3.values);
    dir = await mkdtemp(join(tmpdir(), "stowage-s3-upload-"));
  });
  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("uploads straight to S3 through the app's grant, lists, and downloads with a presigned URL", async () => {
    expect(await (await app.call("/healthz")).json()).toMatchObject({ uploads: "s3" });
    const key = await app.keyFor({ kind: "org", id: `org-${randomUUID().slice(0, 8)}` });
    const sessionId = randomUUID();
    expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
    const file = join(dir, "page.png");
    const png = demoScreenshot();
    await writeFile(file, png);
    const uploaded = await uploadFile({ apiBase: app.url, apiKey: key, sessionId, filePath: file });
    expect(uploaded).toMatchObject({ success: true, filename: "page.png" });
    expect(uploaded.key).toMatch(
      new RegExp(`^sessions/org/org-[0-9a-f]{8}/${sessionId}/artifacts/page\\.png$`),
    );

    const grant = (await (
      await app.call("/agents/artifacts/upload-url", {
        key,
        json: { agentSessionId: sessionId, filename: "x.png", contentType: "image/png", fileSize: 10 },
      })
    ).json()) as { url: string };
    expect(new URL(grant.url).origin).toBe(new URL(s3.values.S3_ENDPOINT!).origin);

    const listed = (await (await app.call(`/agents/${sessionId}/artifacts`, { key })).json()) as {
      artifacts: { filename: string; size: number }[];
    };
    expect(listed.artifacts).toEqual([
      expect.objectContaining({ filename: "page.png", size: png.byteLength }),
    ]);
    const download = (await (
      await app.call(`/agents/${sessionId}/artifacts/page.png/download`, { key })
    ).json()) as { url: string };
    const got = Buffer.from(await (await fetch(download.url)).arrayBuffer());
    expect(got.equals(png)).toBe(true);
    await app.server.services.uploads.store.delete(uploaded.key!);
  });
});
