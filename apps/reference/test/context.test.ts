import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

describe("bootstrap context with artifact refs", () => {
  let on: TestApp;
  let off: TestApp;
  let onKey: string;
  let offKey: string;
  const big = "Run the tests before every commit.\n".repeat(400); // 14,000 characters
  const files = [
    { path: "AGENTS.md", content: big },
    { path: "NOTES.md", content: "short notes" },
  ];

  beforeAll(async () => {
    on = await startTestApp({ STOWAGE_ARTIFACT_REFS: "1", STOWAGE_ARTIFACT_REFS_THRESHOLD_CHARS: "8000" });
    off = await startTestApp();
    onKey = await on.keyFor({ kind: "user", id: "ctx" });
    offKey = await off.keyFor({ kind: "user", id: "ctx" });
  });
  afterAll(async () => {
    await on.close();
    await off.close();
  });

  it("sends large files as ArtifactRef lines when STOWAGE_ARTIFACT_REFS is on, and artifacts_get reads them", async () => {
    const response = await on.call("/context/bootstrap", { key: onKey, json: { files } });
    expect(response.status).toBe(200);
    const context = (await response.json()) as { text: string; refFiles: number };
    expect(context.refFiles).toBe(1);
    const id = /ArtifactRef: ([a-f0-9]{64})/.exec(context.text)?.[1];
    expect(id).toBeDefined();
    expect(context.text).toContain("short notes");
    expect(context.text.length).toBeLessThan(big.length);

    const tool = (await (await on.call("/context/tools/artifacts_get", { key: onKey })).json()) as {
      name: string;
      input_schema: unknown;
    };
    expect(tool.name).toBe("artifacts_get");
    const page = (await (
      await on.call("/context/tools/artifacts_get", { key: onKey, json: { artifact_id: id } })
    ).json()) as {
      content: string;
      next_offset: number | null;
    };
    expect(page.content).toBe(big.slice(0, 8000));
    expect(page.next_offset).toBe(8000);
  });

  it("inlines everything when the option is off (the default)", async () => {
    const context = (await (
      await off.call("/context/bootstrap", { key: offKey, json: { files } })
    ).json()) as { text: string; refFiles: number };
    expect(context.refFiles).toBe(0);
    expect(context.text).toContain(big);
  });

  it("refuses hostile paths and ids", async () => {
    const traversal = await on.call("/context/bootstrap", {
      key: onKey,
      json: { files: [{ path: "../../etc/passwd", content: "x" }] },
    });
    expect(traversal.status).toBe(400);
    const notAList = await on.call("/context/bootstrap", { key: onKey, json: { files: "AGENTS.md" } });
    expect(await errorCode(notAList)).toBe("INVALID_INPUT");
    const badId = await on.call("/context/tools/artifacts_get", {
      key: onKey,
      json: { artifact_id: "../x" },
    });
    expect(badId.status).toBe(400);
    expect((await on.call("/context/bootstrap", { json: { files } })).status).toBe(401);
  });
});
